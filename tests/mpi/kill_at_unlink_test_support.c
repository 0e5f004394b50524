/* kill_at_unlink_test_support.c: preloaded into a job by shm_cleanup_test.py,
   it kills the process (SIGKILL) when it unlinks one of the library's
   segments: a crash inside the set-up window, after the segment was created
   and attached and before its name left /dev/shm.  Other names go to the
   real shm_unlink. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int shm_unlink(const char* name) {
  if (strncmp(name, "/mla-", 5) == 0) kill(getpid(), SIGKILL);
  int (*real)(const char*) = (int (*)(const char*))dlsym(RTLD_NEXT, "shm_unlink");
  return real != NULL ? real(name) : -1;
}
