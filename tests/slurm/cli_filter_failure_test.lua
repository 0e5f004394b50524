-- cli_filter_failure_test.lua SCRIPT TMPDIR: cli_filter.lua says why the
-- profile look-up failed in the command's (its loader's) own words, and cuts
-- one that hangs.  Runs the
-- real script under lua5.3 with a stand-in `slurm` table (only Slurm's
-- logging) and a `multilane` that the real dynamic loader cannot start.
local script, tmp = arg[1], arg[2]
local logged = {}
slurm = {SUCCESS = 0, log_verbose = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end}
slurm.log_info = slurm.log_verbose

local stand_in = tmp .. "/multilane-unloadable"
local f = assert(io.open(stand_in, "w"))
f:write("#!/bin/sh\nexec /lib64/ld-linux-x86-64.so.2 /nonexistent/libmlallreduce.so.0 \"$@\"\n")
f:close()
os.execute("chmod 755 '" .. stand_in .. "'")

local text = assert(io.open(script)):read("a")
text = text:gsub('local MULTILANE = "[^"]*"', 'local MULTILANE = "' .. stand_in .. '"', 1)
assert(load(text))()

local options = {spank = {multilane = {multilane = "set"}}, gpus = "2", partition = "gpu"}
assert(slurm_cli_pre_submit(options, 0) == slurm.SUCCESS, "the job was rejected")
assert(options["ntasks-per-gpu"] == nil, "the layout changed without a profile")
local line = table.concat(logged, "\n")
assert(line:find("exit status 127", 1, true), "no exit status in: " .. line)
assert(line:find("error while loading shared libraries: /nonexistent/libmlallreduce.so.0", 1, true),
       "not the loader's words: " .. line)
assert(line:find("multilane doctor", 1, true), "no pointer to doctor: " .. line)
print("ok: " .. line)

-- A look-up that hangs (a home folder on a dead file server) is cut at
-- RESOLVE_TIMEOUT_S and said so; the job keeps its layout.
local hang = tmp .. "/multilane-hangs"
f = assert(io.open(hang, "w"))
f:write("#!/bin/sh\nexec sleep 60\n")
f:close()
os.execute("chmod 755 '" .. hang .. "'")
text = assert(io.open(script)):read("a")
text = text:gsub('local MULTILANE = "[^"]*"', 'local MULTILANE = "' .. hang .. '"', 1)
text = text:gsub('local RESOLVE_TIMEOUT_S = %d+', 'local RESOLVE_TIMEOUT_S = 1', 1)
assert(load(text))()
logged = {}
options = {spank = {multilane = {multilane = "set"}}, gpus = "2", partition = "gpu"}
assert(slurm_cli_pre_submit(options, 0) == slurm.SUCCESS, "the job was rejected")
assert(options["ntasks-per-gpu"] == nil, "the layout changed without a look-up")
line = table.concat(logged, "\n")
assert(line:find("took more than 1 s", 1, true), "the cut was not said: " .. line)
print("ok: " .. line)
