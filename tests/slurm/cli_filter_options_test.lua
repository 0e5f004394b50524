-- cli_filter_options_test.lua SCRIPT MULTILANE TMPDIR: cli_filter.lua reads the
-- value of --multilane with the plugin's own parser (`multilane resolve
-- --options`, the real command): ranks-per-gpu:N is taken as the plugin takes
-- it, a value the plugin refuses changes nothing and is logged in the
-- plugin's words, and no value reaches a shell as code.  Runs the real script
-- under lua5.3 with a stand-in `slurm` table (only Slurm's logging).
local script, multilane, tmp = arg[1], arg[2], arg[3]
local logged = {}
slurm = {SUCCESS = 0, log_verbose = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end}
slurm.log_info = slurm.log_verbose

local text = assert(io.open(script)):read("a")
text = text:gsub('local MULTILANE = "[^"]*"', 'local MULTILANE = "' .. multilane .. '"', 1)
text = text:gsub('local DATABASE = "[^"]*"', 'local DATABASE = "' .. tmp .. '/no-such.db"', 1)
assert(load(text))()

local function submit(value)
  logged = {}
  local options = {spank = {multilane = {multilane = value}}, gpus = "2", partition = "gpu"}
  assert(slurm_cli_pre_submit(options, 0) == slurm.SUCCESS, "the job was rejected")
  return options["ntasks-per-gpu"], table.concat(logged, "\n")
end

-- The plugin's rule: 1 to 64, digits only.
local n = submit("ranks-per-gpu:3,verbose")
assert(n == "3", "ranks-per-gpu:3 gave " .. tostring(n))
for _, bad in ipairs({"ranks-per-gpu:65", "ranks-per-gpu:0", "ranks-per-gpu:+2", "mpi:intel", "fast"}) do
  local m, line = submit(bad)
  assert(m == nil, bad .. " changed the layout to " .. tostring(m))
  assert(line:find("--multilane: ", 1, true) and line:find("is not valid", 1, true) or line:find("unknown item", 1, true),
         bad .. ": not the plugin's words: " .. line)
end
-- off: nothing changes, nothing is logged as an error.
assert(submit("off") == nil, "off changed the layout")
-- A value with shell syntax, bare or closing a quote, is one argument, never code.
for i, hostile in ipairs({"ranks-per-gpu:2;touch PWNED", "ranks-per-gpu:2';touch PWNED;'", "ranks-per-gpu:2$(touch PWNED)"}) do
  local pwned = tmp .. "/pwned" .. i
  os.remove(pwned)
  local m, line = submit((hostile:gsub("PWNED", pwned)))
  assert(m == nil, "a hostile value changed the layout")
  assert(io.open(pwned) == nil, "the value ran as shell code: " .. pwned .. " exists")
  assert(line:find("is not valid", 1, true), "a hostile value was not refused in the plugin's words: " .. line)
end
print("ok: the cli_filter reads --multilane with the plugin's parser")
