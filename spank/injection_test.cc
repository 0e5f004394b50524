// What user_init puts into a step (injection.h): a job is all in or all out,
// so a node without a usable profile preloads the library with MULTILANE_OFF
// wherever the library itself can load.
#include "spank/injection.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace multilane_spank {
namespace {

using Kind = Injection::Kind;

const char* const kLibrary = "/usr/lib/libmlallreduce.so.0";
const char* const kCommand = "/usr/bin/multilane";

SubprocessResult Answered(const std::string& output) {
  SubprocessResult r;
  r.ran = true;
  r.exit_status = 0;
  r.output = output;
  return r;
}

Injection Decide(const SubprocessResult& r, bool library_ok = true) {
  return DecideInjection(r, ParseKeyValueLines(r.output), kCommand, kLibrary, library_ok,
                         std::string("the library ") + kLibrary +
                             " does not exist (No such file or directory); "
                             "the admin fixes library= in plugstack.conf");
}

const char* const kHit = "library_loads=yes\nfound=yes\nprofile=multilane-profile 1;host 0 inf lane\n";
const char* const kMiss = "library_loads=yes\nfound=no\nwhy=no profile for node type abc; an admin tunes it\n";

TEST(Injection, AProfileIsInjected) {
  const Injection i = Decide(Answered(kHit));
  EXPECT_EQ(i.kind, Kind::kProfile);
  EXPECT_TRUE(i.line.empty());
}

// The cases that used to leave the node bare beside nodes with the library.
TEST(Injection, NoProfilePreloadsTheLibraryOff) {
  const Injection i = Decide(Answered(kMiss));
  EXPECT_EQ(i.kind, Kind::kOff);
  EXPECT_EQ(i.line, "no profile for node type abc; an admin tunes it; this step runs without multilane");
}

TEST(Injection, AResolverTimeoutPreloadsTheLibraryOff) {
  SubprocessResult r;
  r.error = "timed out after 2 s";
  r.output = "library_loads=yes\n";  // what it wrote before it hung
  const Injection i = Decide(r);
  EXPECT_EQ(i.kind, Kind::kOff);
  EXPECT_NE(i.line.find("look-up (/usr/bin/multilane resolve) failed: timed out after 2 s"), std::string::npos)
      << i.line;
  EXPECT_NE(i.line.find("multilane doctor"), std::string::npos) << i.line;
}

TEST(Injection, AResolverErrorPreloadsTheLibraryOff) {
  SubprocessResult r;
  r.ran = true;
  r.exit_status = 127;
  r.error_line = "error while loading shared libraries: libx.so";
  const Injection i = Decide(r);
  EXPECT_EQ(i.kind, Kind::kOff);
  EXPECT_NE(i.line.find("exit status 127: error while loading shared libraries"), std::string::npos) << i.line;
}

TEST(Injection, BadResolverOutputPreloadsTheLibraryOff) {
  for (const char* output : {"", "garbage\n", "found=yes\nprofile=x\n", "library_loads=yes\nfound=yes\n"}) {
    const Injection i = Decide(Answered(output));
    EXPECT_EQ(i.kind, Kind::kOff) << output;
    EXPECT_NE(i.line.find("without multilane"), std::string::npos) << i.line;
  }
}

// Only a library that cannot load leaves the step bare: then no rank of the
// job can carry it, which is all out already.
TEST(Injection, ALibraryThatDoesNotLoadIsNeverPreloaded) {
  for (const char* output : {"library_loads=no\nlibrary_error=bad ELF\nfound=yes\nprofile=p\n",
                             "library_loads=no\nlibrary_error=bad ELF\nfound=no\nwhy=no profile\n"}) {
    const Injection i = Decide(Answered(output));
    EXPECT_EQ(i.kind, Kind::kNone) << output;
    EXPECT_NE(i.line.find("does not load: bad ELF"), std::string::npos) << i.line;
  }
}

TEST(Injection, AMissingLibraryIsNeverPreloaded) {
  SubprocessResult failed;
  failed.error = "timed out after 2 s";
  for (const SubprocessResult& r : {Answered(kHit), Answered(kMiss), failed}) {
    const Injection i = Decide(r, false);
    EXPECT_EQ(i.kind, Kind::kNone) << r.output;
    EXPECT_NE(i.line.find("does not exist"), std::string::npos) << i.line;
    EXPECT_NE(i.line.find("without multilane"), std::string::npos) << i.line;
  }
}

TEST(Injection, OffReasonIsOneBoundedLineNamingTheNode) {
  EXPECT_EQ(OffReason("node2", "no profile; fix"), "node2: no profile; fix");
  EXPECT_EQ(OffReason("", "a\nb\tc"), "a node: a b c");
  const std::string long_reason = OffReason("n", std::string(100000, 'x'));
  EXPECT_EQ(long_reason.size(), 1024u);
  EXPECT_EQ(long_reason.substr(1021), "...");
}

TEST(LooksLikeLibrary, OnlyAnElfFile) {
  std::string why;
  EXPECT_FALSE(LooksLikeLibrary("/nonexistent/libx.so", &why));
  EXPECT_NE(why.find("does not exist"), std::string::npos) << why;
  char path[] = "/tmp/mla-notelf-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, "#!/bin/sh\n", 10), 10);
  close(fd);
  EXPECT_FALSE(LooksLikeLibrary(path, &why));
  EXPECT_NE(why.find("not a loadable shared object"), std::string::npos) << why;
  unlink(path);
  EXPECT_TRUE(LooksLikeLibrary("/proc/self/exe", &why));
}

}  // namespace
}  // namespace multilane_spank
