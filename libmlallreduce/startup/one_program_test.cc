// one_program_test.cc: EveryRankRunsThisProgram on real processes (a parent
// that starts "ranks" by fork, so they run this test's program file, and one
// that runs another program: an MPMD job's shape), and ParseChildIds.
#include "libmlallreduce/startup/one_program.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

namespace {

// Waits until every writer of `fd` closed it.
void WaitForClose(int fd) {
  char byte;
  while (read(fd, &byte, 1) > 0) {
  }
}

// Forks a launcher that starts `same` children running this program and, with
// `other`, one running /bin/sleep; once all exist, each child of this program
// asks EveryRankRunsThisProgram(world_size), and all stay alive until every
// one has answered (as ranks do: none leaves MPI_Init before the others
// entered it).  Returns how many said yes.
int RanksThatSayYes(int same, bool other, int world_size) {
  int answers[2], done[2];
  if (pipe2(answers, O_CLOEXEC) != 0 || pipe2(done, O_CLOEXEC) != 0) return -1;
  const pid_t launcher = fork();
  if (launcher == 0) {
    close(answers[0]);
    close(done[1]);
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0) _exit(2);
    pid_t sleeper = -1;
    if (other) {
      // Until it runs /bin/sleep, not this program: the pipe's write end
      // closes at the exec (O_CLOEXEC), and the read then ends.
      int exec_seen[2];
      if (pipe2(exec_seen, O_CLOEXEC) != 0) _exit(2);
      sleeper = fork();
      if (sleeper == 0) {
        execl("/bin/sleep", "sleep", "30", static_cast<char*>(nullptr));
        _exit(2);
      }
      close(exec_seen[1]);
      WaitForClose(exec_seen[0]);
    }
    std::vector<pid_t> ranks;
    for (int i = 0; i < same; ++i) {
      const pid_t r = fork();
      if (r == 0) {
        close(go[1]);
        WaitForClose(go[0]);  // the launcher closes it once every rank exists
        const char yes = mla::lib::EveryRankRunsThisProgram(world_size) ? 'y' : 'n';
        if (write(answers[1], &yes, 1) != 1) _exit(2);
        WaitForClose(done[0]);
        _exit(0);
      }
      ranks.push_back(r);
    }
    close(go[1]);
    for (pid_t r : ranks) waitpid(r, nullptr, 0);
    if (sleeper > 0) {
      kill(sleeper, SIGKILL);
      waitpid(sleeper, nullptr, 0);
    }
    _exit(0);
  }
  close(answers[1]);
  close(done[0]);
  int yes = 0;
  char c;
  for (int i = 0; i < same && read(answers[0], &c, 1) == 1; ++i) yes += c == 'y';
  close(answers[0]);
  close(done[1]);
  waitpid(launcher, nullptr, 0);
  return yes;
}

TEST(OneProgram, EveryRankOfOneProgramSaysYes) { EXPECT_EQ(RanksThatSayYes(3, false, 3), 3); }

TEST(OneProgram, AJobLargerThanTheNodeSaysNo) { EXPECT_EQ(RanksThatSayYes(3, false, 4), 0); }

TEST(OneProgram, AnMpmdJobSaysNo) { EXPECT_EQ(RanksThatSayYes(3, true, 4), 0); }

TEST(OneProgram, ParseChildIds) {
  EXPECT_EQ(mla::lib::ParseChildIds("12 13 14 ", 100), (std::vector<long>{12, 13, 14}));
  EXPECT_EQ(mla::lib::ParseChildIds("", 100), std::vector<long>{});
  EXPECT_EQ(mla::lib::ParseChildIds("1 -2 0x3 0 99999999999 4\n", 100), (std::vector<long>{1, 4}));
  EXPECT_EQ(mla::lib::ParseChildIds("1 2 3", 2), (std::vector<long>{1, 2}));
}

}  // namespace
