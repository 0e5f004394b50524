// tune_folder.h: the folder a `multilane tune` keeps its plan, the probe's
// result and the Slurm jobs' output in.  Removed when the tune ends, on every
// path (errors and interrupts included), unless the user asked to keep it.
#ifndef MULTILANE_LAUNCHER_TUNE_FOLDER_H_
#define MULTILANE_LAUNCHER_TUNE_FOLDER_H_

#include <string>

namespace multilane {

class TuneFolder {
 public:
  TuneFolder() = default;
  // Removes the folder and everything in it unless it is kept.
  ~TuneFolder();
  TuneFolder(const TuneFolder&) = delete;
  TuneFolder& operator=(const TuneFolder&) = delete;

  // keep not empty: makes that folder (mode 0700; its parents with
  // std::filesystem), exactly as named (no shell ever sees it), and keeps
  // it.  An existing one is used only when it is a real folder (not a link)
  // of this user that neither its group nor others may write: the tune
  // writes and re-reads files there (as root too).  Else makes a new private
  // folder `multilane-tune.XXXXXX` in `parent` (mkdtemp), removed by the
  // destructor.  Returns false and sets *error to one line naming the
  // folder, the cause and the fix.  Files in the folder are opened without
  // following links (O_NOFOLLOW, or a new file renamed into place).
  bool Make(const std::string& keep, const std::string& parent, std::string* error);

  const std::string& path() const { return path_; }
  bool kept() const { return kept_; }

 private:
  std::string path_;
  bool kept_ = false;
};

// The folder for temporary files: $TMPDIR when it is an absolute path, else
// /tmp.
std::string TemporaryParent();

}  // namespace multilane

#endif  // MULTILANE_LAUNCHER_TUNE_FOLDER_H_
