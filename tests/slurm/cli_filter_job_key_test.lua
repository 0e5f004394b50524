-- cli_filter_job_key_test.lua SCRIPT TMPDIR (MULTILANE_JOB_KEY=from-env in
-- the environment): cli_filter.lua passes the job key the job will see to
-- `multilane resolve --job-key`, and takes the history's choice
-- (ranks_per_gpu_chosen) over the profile's: the submitting environment's
-- key unless --export does not pass it, a MULTILANE_JOB_KEY=VALUE item's
-- value, never as shell code.  Runs the real script under lua5.3 with a
-- stand-in `slurm` table and a stand-in `multilane` that answers with the
-- key it was given.
local script, tmp = arg[1], arg[2]
assert(os.getenv("MULTILANE_JOB_KEY") == "from-env", "run with MULTILANE_JOB_KEY=from-env")
local logged = {}
slurm = {SUCCESS = 0, log_verbose = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end}
slurm.log_info = slurm.log_verbose

local stand_in = tmp .. "/multilane-job-key"
local f = assert(io.open(stand_in, "w"))
f:write([[#!/bin/sh
echo found=yes
echo ranks_per_gpu=1
while [ $# -gt 0 ]; do
  if [ "$1" = --job-key ]; then echo ranks_per_gpu_chosen=3; echo "layout_why=key <$2>"; fi
  shift
done
]])
f:close()
os.execute("chmod 755 '" .. stand_in .. "'")

local text = assert(io.open(script)):read("a")
text = text:gsub('local MULTILANE = "[^"]*"', 'local MULTILANE = "' .. stand_in .. '"', 1)
assert(load(text))()

local function submit(export)
  logged = {}
  local options = {spank = {multilane = {multilane = "set"}}, gpus = "2", partition = "gpu", export = export}
  assert(slurm_cli_pre_submit(options, 0) == slurm.SUCCESS, "the job was rejected")
  return options["ntasks-per-gpu"], table.concat(logged, "\n")
end

local pwned = tmp .. "/pwned-by-key"
os.remove(pwned)
local cases = {
  {nil, "3", "key <from-env>"},
  {"ALL", "3", "key <from-env>"},
  {"MULTILANE_JOB_KEY", "3", "key <from-env>"},
  {"ALL,MULTILANE_JOB_KEY=named", "3", "key <named>"},
  {"NONE", "1", nil},
  {"NIL", "1", nil},
  {"PATH,HOME", "1", nil},
  {"MULTILANE_JOB_KEY=a';touch " .. pwned .. ";'", "3", "key <a';touch " .. pwned .. ";'>"},
}
for _, c in ipairs(cases) do
  local n, line = submit(c[1])
  assert(n == c[2], tostring(c[1]) .. ": --ntasks-per-gpu " .. tostring(n) .. ", expected " .. c[2] .. " (" .. line .. ")")
  if c[3] then
    assert(line:find("3 rank(s) per GPU: " .. c[3], 1, true), tostring(c[1]) .. ": not the choice's line: " .. line)
  end
end
assert(io.open(pwned) == nil, "the key ran as shell code: " .. pwned .. " exists")
print("ok: the cli_filter passes the job key the job will see")
