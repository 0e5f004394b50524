// Unit test of process.h's InterruptGuard: no signal that can be caught
// ends the process while one exists (what `run --mps` and `tune` rely on to
// clean up), and a signal the process was started with ignored stays so.
#include "launcher/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

namespace multilane {
namespace {

TEST(InterruptGuardTest, EverySignalThatWouldEndTheProcessIsRecordedInstead) {
  for (const int sig :
       {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGPWR, SIGRTMIN, SIGRTMAX}) {
    InterruptGuard guard;
    EXPECT_EQ(InterruptSignal(), 0);
    raise(sig);  // without the guard: the process ends here
    EXPECT_EQ(InterruptSignal(), sig) << strsignal(sig);
  }
}

TEST(InterruptGuardTest, ASignalIgnoredFromTheStartStaysIgnoredAndActionsComeBack) {
  struct sigaction ignore {
  }, before{}, during{}, after{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGHUP, &ignore, &before), 0);  // as under nohup
  {
    InterruptGuard guard;
    sigaction(SIGHUP, nullptr, &during);
    EXPECT_EQ(during.sa_handler, SIG_IGN);
    raise(SIGHUP);
    EXPECT_EQ(InterruptSignal(), 0);
  }
  sigaction(SIGHUP, &before, &after);
  EXPECT_EQ(after.sa_handler, SIG_IGN);  // the guard put the action it found back
  sigaction(SIGQUIT, nullptr, &after);
  EXPECT_EQ(after.sa_handler, SIG_DFL);
}

TEST(ProcessOwnerTest, TheEffectiveUidOfTheStatusFile) {
  uid_t uid = 1;
  ASSERT_TRUE(ParseProcessUid("Name:\tx\nUmask:\t0022\nUid:\t1000\t0\t0\t0\nGid:\t1\t1\t1\t1\n", &uid));
  EXPECT_EQ(uid, 0u);
  EXPECT_FALSE(ParseProcessUid("Name:\tx\nUid:\t1000\n", &uid));
  EXPECT_FALSE(ParseProcessUid("Name:\tUid:\t1 2\n", &uid));
  EXPECT_FALSE(ParseProcessUid("Name:\tx\nUid:\t1\t99999999999\n", &uid));
  ASSERT_TRUE(ProcessOwner(getpid(), &uid));
  EXPECT_EQ(uid, geteuid());
}

}  // namespace
}  // namespace multilane
