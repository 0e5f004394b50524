// subprocess.h: runs an admin-configured program as the job's user, with a
// clean environment and a time limit, and captures what it prints.  Used so
// that the profile look-up (SQLite, hwloc, the MPI library) never runs inside
// slurmstepd itself: a crash or a hang there cannot take the step down.
#ifndef MULTILANE_SPANK_SUBPROCESS_H_
#define MULTILANE_SPANK_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace multilane_spank {

struct SubprocessResult {
  bool ran = false;        // false: could not start, timed out or was killed by a signal
  int exit_status = -1;    // when ran
  std::string output;      // stdout (at most 1 MiB)
  std::string error;       // one line when !ran: what happened - the exec error ("No such file or
                           // directory"), or for exit status 127 the first line the program (its
                           // loader) wrote on stderr, e.g. "error while loading shared libraries: ..."
  std::string error_line;  // the first line the program wrote on stderr ("" when none)
};

// Runs argv (argv[0] an absolute path) with exactly `env` as its environment.
// When uid/gid are not (uid_t)-1, the child takes them as real, effective and
// saved ids (and drops supplementary groups when it may) before exec, so it
// can never regain root.  Kills it (SIGKILL, whole process group) after
// `timeout_s` seconds.  Never throws.
// `input` is written to its standard input (else it reads /dev/null).  Its
// standard error is read (the first 4 KiB kept) to explain failures.
SubprocessResult RunCapture(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                            uid_t uid, gid_t gid, int timeout_s, const std::string& input = "");

// Parses `key=value` lines; later keys win; lines without '=' are ignored.
std::map<std::string, std::string> ParseKeyValueLines(const std::string& text);

}  // namespace multilane_spank

#endif  // MULTILANE_SPANK_SUBPROCESS_H_
