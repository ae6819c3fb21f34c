// Rank placement: pure logic, testable without a GPU.
#include <map>

#include "engine/backends/cuda/cuda_backend.h"

namespace shardlab {

std::vector<int> PhysicalGpus(int ranks, const std::vector<int>& rank_to_gpu, int device_count) {
  std::vector<int> out(static_cast<std::size_t>(ranks > 0 ? ranks : 0));
  for (int r = 0; r < ranks; ++r) {
    const int model = rank_to_gpu.empty() ? r : rank_to_gpu.at(static_cast<std::size_t>(r));
    out[static_cast<std::size_t>(r)] = device_count > 0 ? model % device_count : 0;
  }
  return out;
}

std::string DescribePlacement(const std::vector<int>& physical_gpus, int device_count) {
  const int ranks = static_cast<int>(physical_gpus.size());
  std::map<int, std::vector<int>> by_gpu;
  for (int r = 0; r < ranks; ++r) by_gpu[physical_gpus[static_cast<std::size_t>(r)]].push_back(r);
  const std::string head = std::to_string(ranks) + (ranks == 1 ? " rank on " : " ranks on ") +
                           std::to_string(by_gpu.size()) +
                           (by_gpu.size() == 1 ? " GPU" : " GPUs");
  if (static_cast<int>(by_gpu.size()) == ranks) return head + " (one each)";
  std::string text = head + " as virtual devices (separate buffers and streams):";
  for (const auto& [gpu, list] : by_gpu) {
    text += " GPU " + std::to_string(gpu) + " holds rank" + (list.size() > 1 ? "s " : " ");
    // Runs of consecutive ranks as "a-b".
    for (std::size_t i = 0; i < list.size();) {
      std::size_t j = i;
      while (j + 1 < list.size() && list[j + 1] == list[j] + 1) ++j;
      if (i > 0) text += ",";
      text += std::to_string(list[i]);
      if (j > i) text += "-" + std::to_string(list[j]);
      i = j + 1;
    }
    text += ";";
  }
  text.pop_back();
  (void)device_count;
  return text;
}

}  // namespace shardlab
