// log.h: the library's messages on stderr, prefixed "multilane: ".
#ifndef MLA_LOG_H_
#define MLA_LOG_H_

#include <string>

namespace mla::lib {

// Sets the process's rank in MPI_COMM_WORLD once MPI is up; before that every
// process counts as rank 0.  Thread-safe.
void SetWorldRank(int rank);

// Returns the rank set by SetWorldRank, or 0.
int WorldRank();

// Prints "multilane: warning: MESSAGE" (control bytes escaped, terminal_text.h)
// once per distinct message per process,
// and only on world rank 0, so a job sees each problem once.  Thread-safe.
void WarnOnce(const std::string& message);

// Prints "multilane: warning: MESSAGE" on this process whatever its rank, for
// the one rank the start-up agreement names to say why multilane is off; a
// later WarnOnce of the same message prints nothing.  Thread-safe.
void WarnHere(const std::string& message);

// Prints "multilane: MESSAGE" (control bytes escaped) on world rank 0.  Thread-safe.
void Info(const std::string& message);

}  // namespace mla::lib

#endif  // MLA_LOG_H_
