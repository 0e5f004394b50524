// progress.h: the progress bar of `multilane tune`, fed by the probe's
// "progress DONE TOTAL SECONDS_LEFT WHAT" lines.
#ifndef MULTILANE_LAUNCHER_PROGRESS_H_
#define MULTILANE_LAUNCHER_PROGRESS_H_

#include <cstdio>
#include <string>

namespace multilane {

struct ProgressLine {
  long done = 0;
  long total = 0;
  double seconds_left = 0;
  std::string what;
};

// Parses one line of the probe's output; false when it is not a progress line.
bool ParseProgressLine(const std::string& line, ProgressLine* out);

// Draws progress on a terminal (one line redrawn with \r) or, when `out` is
// not a terminal, prints a plain line at most every few seconds.
class ProgressBar {
 public:
  explicit ProgressBar(FILE* out);
  void Update(const ProgressLine& p);
  // Ends the bar's line.
  void Finish();

 private:
  FILE* out_;
  bool tty_;
  double last_print_ = -1e9;
  bool drawn_ = false;
};

// "[#########-----------]  45%  12 s left  lane lanes=2 at 1M".
std::string RenderBar(const ProgressLine& p, int width);

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_PROGRESS_H_
