// A student's progress through labs, saved after every change so that a
// crash, a kill or a full disk never loses more than the change in flight.
//
//   <dir>/<lab id>.progress.toml      one file per lab:
//     lab = "01-ring-allreduce"
//     step = 2                        # the step the student is on (0-based)
//     completed = ["intro", "predict"]  # steps finished
//     [[answer]]                      # one per question answered
//     question = "busbw"
//     value = "230"                   # as typed (numbers too, exactly)
//     checked = true
//     verdict = "wrong"               # correct | wrong | missing | invalid
//     expected = "229.6 GB/s"
//     feedback = "..."
//
// Saving writes a temporary file in the same folder, fsyncs it, renames it
// over the old file and fsyncs the folder (core/file_io.h). Opening a store
// sweeps temporary files left by a killed save. A progress file that cannot
// be read is renamed aside to "<file>.corrupt-<n>" (never deleted) and the
// lab starts fresh with a message saying where the old file went.
//
// The app's lab panel owns one ProgressStore (dir: the user's data folder,
// e.g. ~/.local/share/shardlab/progress) and calls Save after each answer,
// check and step change. Not thread-safe: call it from one thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/core/file_io.h"

namespace shardlab {

/// Largest progress file read back.
inline constexpr std::size_t kMaxProgressBytes = std::size_t{1} << 20;

struct LabProgressAnswer {
  std::string question_id;
  std::string value;          // as the student typed it
  bool checked = false;       // the student pressed Check
  std::string verdict;        // LabVerdictName when checked, else ""
  std::string expected;       // the expected value's text when checked
  std::string feedback;       // the feedback shown when checked
};

struct LabProgress {
  std::string lab_id;
  /// The step the student is on. A lab edited since the save may have fewer
  /// steps (or other question ids): the panel clamps and ignores what is gone.
  int step = 0;
  std::vector<std::string> completed;   // step ids
  std::vector<LabProgressAnswer> answers;

  /// The answer to `question_id`, or nullptr.
  const LabProgressAnswer* Find(const std::string& question_id) const;
  /// Adds or replaces the answer with the same question id.
  void SetAnswer(LabProgressAnswer answer);
};

/// The progress as TOML that ParseLabProgress reads back identical.
std::string WriteLabProgress(const LabProgress& progress);
/// Throws Error(kInvalidInput) "path:line: field: message".
LabProgress ParseLabProgress(std::string_view text, const std::string& path);

struct ProgressLoad {
  LabProgress progress;       // fresh (step 0, no answers) when none was saved
  bool fresh = true;          // nothing usable was saved
  /// Non-empty when a saved file was unreadable: "progress for lab '01-...'
  /// could not be read (path:3: ...); it was kept as <path>.corrupt-1 and
  /// the lab starts fresh". Show it to the student.
  std::string warning;
};

class ProgressStore {
 public:
  /// Creates `dir` when missing and sweeps stale temporary files in it.
  explicit ProgressStore(std::string dir, FileIo& io = RealFileIo());

  /// The saved progress of `lab_id`, or a fresh one.
  ProgressLoad Load(const std::string& lab_id);

  /// Saves atomically; throws Error(kRuntime) naming the file and the
  /// cause ("no space left on device") with the previous save intact.
  void Save(const LabProgress& progress);

  /// "<dir>/<lab id>.progress.toml". Throws Error(kInvalidInput) for a lab
  /// id that is not a plain name (letters, digits, '-', '_', '.').
  std::string PathFor(const std::string& lab_id) const;

  const std::string& dir() const { return dir_; }
  /// Temporary files the constructor swept.
  int swept() const { return swept_; }

 private:
  std::string dir_;
  FileIo& io_;
  int swept_ = 0;
};

}  // namespace shardlab
