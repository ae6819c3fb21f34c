#include "app/gui/model/this_machine_choice.h"

#include <optional>

#include "app/gui/i18n/language.h"
#include "engine/core/error.h"
#include "engine/topology/this_machine.h"

namespace shardlab::gui {
namespace {

/// What detection found here, asked once: it does not change while the app runs.
const std::optional<DetectedMachine>& DetectedHere() {
  static const std::optional<DetectedMachine> detected = [] {
    std::string no_gpu;
    return DetectThisMachine(&no_gpu);
  }();
  return detected;
}

}  // namespace

std::string ThisMachineUnavailable(const std::string& profile_path) {
  if (!ThisMachineNeedsProfile(DetectedHere().has_value(), profile_path)) return "";
  return Tr("no GPU detected here: give a device profile (shardlab-cli calibrate's TOML) to model one");
}

MachineModel ModelThisMachine(const std::string& profile_path, int gpus, int ranks) {
  const std::string unavailable = ThisMachineUnavailable(profile_path);
  if (!unavailable.empty()) throw Error(unavailable, ErrorKind::kInvalidInput);
  // A bad profile throws its own "FILE:LINE: message".
  return BuildMachineModel(RecordThisMachine(DetectedHere(), profile_path, gpus), ranks, DetectedHere());
}

}  // namespace shardlab::gui
