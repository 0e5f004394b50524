#include "launcher/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <sstream>

namespace multilane {
namespace {
double Now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

bool ParseProgressLine(const std::string& line, ProgressLine* out) {
  std::istringstream in(line);
  std::string word;
  ProgressLine p;
  if (!(in >> word) || word != "progress") return false;
  if (!(in >> p.done >> p.total >> p.seconds_left)) return false;
  if (p.total <= 0 || p.done < 0 || p.done > p.total || !std::isfinite(p.seconds_left)) return false;
  std::getline(in, p.what);
  size_t start = p.what.find_first_not_of(' ');
  p.what = start == std::string::npos ? "" : p.what.substr(start);
  while (!p.what.empty() && (p.what.back() == '\n' || p.what.back() == '\r')) p.what.pop_back();
  *out = p;
  return true;
}

std::string RenderBar(const ProgressLine& p, int width) {
  const double fraction = p.total > 0 ? static_cast<double>(p.done) / p.total : 0;
  const int filled = static_cast<int>(fraction * width + 0.5);
  std::ostringstream s;
  s << '[' << std::string(filled, '#') << std::string(width - filled, '-') << "] ";
  s.width(3);
  s << static_cast<int>(fraction * 100 + 0.5) << "%  ";
  s << static_cast<long>(p.seconds_left + 0.5) << " s left  " << p.what;
  return s.str();
}

ProgressBar::ProgressBar(FILE* out) : out_(out), tty_(isatty(fileno(out)) != 0) {}

void ProgressBar::Update(const ProgressLine& p) {
  if (tty_) {
    std::string bar = RenderBar(p, 30);
    if (bar.size() > 100) bar.resize(100);
    std::fprintf(out_, "\r%-100s", bar.c_str());
    std::fflush(out_);
    drawn_ = true;
    return;
  }
  const double now = Now();
  if (now - last_print_ < 5 && p.done != p.total) return;
  last_print_ = now;
  std::fprintf(out_, "multilane tune: %s\n", RenderBar(p, 20).c_str());
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (tty_ && drawn_) std::fprintf(out_, "\n");
  drawn_ = false;
}

}  // namespace multilane
