-- cli_filter.lua: the companion of spank_multilane.so.  A SPANK plugin cannot
-- change a job request, so this cli_filter/lua script gives jobs submitted
-- with --multilane (sbatch, salloc, srun) the tuned layout: `ranks_per_gpu`
-- tasks on each GPU (--ntasks-per-gpu), which also sizes the allocation so
-- that every task has a CPU.
--
-- Install (docs/admin.md): copy the installed one (share/multilane/cli_filter.lua,
-- whose settings below hold the install's paths) to cli_filter.lua beside
-- slurm.conf, keep the settings below as in plugstack.conf, and add
-- `CliFilterPlugins=cli_filter/lua` to slurm.conf.
--
-- It changes nothing when:
--   * --multilane is absent (and DEFAULT is off), `off` or `help`;
--   * the job asks for no GPUs (--gpus, --gpus-per-node or --gres=gpu);
--   * the user chose a layout (--ntasks, --ntasks-per-gpu, --ntasks-per-node,
--     --gpus-per-task);
--   * no profile of the partition exists (the job then runs unchanged, and
--     the plugin says why in one line).
-- It never rejects a job: the value of --multilane is read by the plugin's own
-- parser (`multilane resolve --options`), and a value it refuses makes the
-- plugin refuse the job with its own words.

local MULTILANE = "@MULTILANE_FULL_COMMAND@"               -- the multilane command
local DATABASE = "@MULTILANE_SYSTEM_DATABASE@"    -- the system database
local DEFAULT = "off"                                -- as default= in plugstack.conf: off or auto
local RESOLVE_TIMEOUT_S = 30                         -- as resolve_timeout= in plugstack.conf

local function log(message)
  slurm.log_verbose("multilane: %s", message)
end

-- Whether the job asked for multilane: the option given, or none given and
-- the admin's default is auto.  What the option's value says is read by the
-- plugin's own parser, through `multilane resolve --options` below.
local function asked(value)
  if value == nil then return DEFAULT == "auto" end
  return true
end

-- A word for the shell: in single quotes, any quote inside closed and escaped.
local function quoted(word)
  return "'" .. string.gsub(word, "'", "'\\''") .. "'"
end

local function set(v)
  return v ~= nil and v ~= "" and v ~= "0" and string.sub(v, 1, 1) ~= "-"
end

local function asks_for_gpus(options)
  if set(options["gpus"]) or set(options["gpus-per-node"]) then return true end
  local gres = options["gres"]
  return gres ~= nil and string.find(gres, "gpu") ~= nil
end

local function default_partition()
  local p = io.popen("sinfo -h -o %P 2>/dev/null")
  if p == nil then return nil end
  for line in p:lines() do
    local name = string.match(line, "^(.-)%*$")
    if name then p:close() return name end
  end
  p:close()
  return nil
end

-- The job key the job will see (MULTILANE_JOB_KEY, docs/history.md), given
-- --export's value: the submitting environment's with the default or ALL,
-- the value of a MULTILANE_JOB_KEY=VALUE item, and none when the variable is
-- not passed (NONE, NIL, or a list without it): its runs would then be filed
-- under another key, and a try would never be measured.
local function job_key(export)
  local from_env = os.getenv("MULTILANE_JOB_KEY")
  if export == nil or export == "" then return from_env end
  local passed = nil
  for item in string.gmatch(export, "[^,]+") do
    if item == "ALL" then passed = passed or from_env end
    if item == "MULTILANE_JOB_KEY" then passed = from_env end
    local v = string.match(item, "^MULTILANE_JOB_KEY=(.*)$")
    if v then return v end
  end
  return passed
end

-- The tasks per GPU for the job: the value's ranks-per-gpu:N, else what the
-- job's own history chooses (its key MULTILANE_JOB_KEY, as the job will see
-- it: docs/history.md "The next layout"), else the tuned number of the
-- partition's profile (of the job's MPI family: the value's mpi:FAMILY, else
-- the first family with a profile), from the system database.  nil when multilane is off for the job, the value is refused (the
-- plugin refuses the job itself, with the same words), or no profile exists;
-- says why in the submitting user's verbose output with the command's own
-- words (a loader error is not "no profile").
local function ranks_per_gpu(partition, value, export)
  -- Bounded: the look-up reads the user's database too (the job history),
  -- and a hung home folder must not hang the submission.
  local cmd = string.format("timeout %d %s resolve --db %s --partition %s --any-node-type", RESOLVE_TIMEOUT_S,
                            MULTILANE, quoted(DATABASE), quoted(partition))
  if value ~= nil and value ~= "set" then cmd = cmd .. " --options " .. quoted(value) end
  local key = job_key(export)
  if key ~= nil and key ~= "" then cmd = cmd .. " --job-key " .. quoted(key) end
  local p = io.popen(cmd .. " 2>&1")
  if p == nil then
    log("cannot run " .. MULTILANE .. " resolve; jobs keep their layout")
    return nil
  end
  local found, per_gpu, asked_n, off, why, other = false, nil, nil, false, nil, nil
  local chosen, chosen_why, notes = nil, nil, {}
  for line in p:lines() do
    if line == "found=yes" then found = true end
    if line == "enabled=no" then off = true end
    local n = string.match(line, "^ranks_per_gpu=(%d+)$")
    if n then per_gpu = tonumber(n) end
    local a = string.match(line, "^ranks_per_gpu_asked=(%d+)$")
    if a then asked_n = tonumber(a) end
    local c = string.match(line, "^ranks_per_gpu_chosen=(%d+)$")
    if c then chosen = tonumber(c) end
    chosen_why = string.match(line, "^layout_why=(.*)$") or chosen_why
    local note = string.match(line, "^history_note=(.*)$")
    if note then table.insert(notes, note) end
    local w = string.match(line, "^why=(.*)$") or string.match(line, "^options_error=(.*)$")
    if w then why = w end
    if other == nil and not string.match(line, "^[%w_]+=") and line ~= "" then other = line end
  end
  local ok, how, code = p:close()
  if off then return nil end
  if asked_n then return asked_n end
  for _, note in ipairs(notes) do slurm.log_info("multilane: %s", note) end
  if found and chosen then
    -- The one line that says what the job's history chose and why.
    slurm.log_info("multilane: %d rank(s) per GPU: %s", chosen, chosen_why or "")
    return chosen
  end
  if found then return per_gpu end
  if code == 124 then
    log(string.format("%s resolve took more than %d s (a slow database or home folder); the job keeps its layout",
                      MULTILANE, RESOLVE_TIMEOUT_S))
  elseif code ~= nil and code ~= 0 then
    -- 127: the command could not start (missing, or its loader failed).
    log(string.format("%s resolve failed (exit status %d): %s; the job keeps its layout (the admin runs "
                      .. "`multilane doctor`)", MULTILANE, code, other or "no message"))
  elseif why then
    log(why)
  end
  return nil
end

function slurm_cli_setup_defaults(options, early)
  return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
  local spank = options.spank and options.spank["multilane"]
  local value = spank and spank["multilane"]
  if not asked(value) then return slurm.SUCCESS end
  if not asks_for_gpus(options) then return slurm.SUCCESS end
  if (set(options["ntasks"]) and options["ntasks"] ~= "1") or set(options["ntasks-per-gpu"]) or
     set(options["ntasks-per-node"]) or set(options["gpus-per-task"]) then
    return slurm.SUCCESS
  end
  local partition = options["partition"]
  if partition == nil or partition == "" then partition = default_partition() end
  if partition == nil or string.find(partition, "[^%w%-_.]") then partition = "" end  -- then only ranks-per-gpu:N
  local per_gpu = ranks_per_gpu(partition, value, options["export"])
  if per_gpu == nil then return slurm.SUCCESS end
  options["ntasks-per-gpu"] = tostring(per_gpu)
  log("tasks per GPU: " .. tostring(per_gpu))
  return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
  return slurm.SUCCESS
end
