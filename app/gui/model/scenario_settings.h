// ScenarioSettings: what the scenario panel edits, and the app's names of
// the scenarios (the spec names of engine/scenarios/). The fields bound to a
// spec's parameter take their defaults from it (scenario_fields.cpp);
// ParamsOf turns the settings into the spec's ScenarioParams, which is all
// Session runs from. Session::Check (session_check.cpp) says what is wrong
// with them.
#pragma once

#include <map>
#include <string>

namespace shardlab::gui {

/// The scenario panel's names for pipeline training, for one
/// tensor-parallel (Megatron) layer and for data-parallel / ZeRO training;
/// every other scenario is a collective kind.
inline constexpr const char* kPipelineScenario = "pipeline";
inline constexpr const char* kTensorParallelScenario = "tp";
inline constexpr const char* kZeroScenario = "zero";
/// DP x PP x TP training of the small MLP, and one expert-parallel MoE layer.
inline constexpr const char* kThreeDScenario = "3d";
inline constexpr const char* kMoeScenario = "moe";
/// Multi-step data-parallel SGD with the training techniques.
inline constexpr const char* kDpTrainScenario = "dp-train";

/// What the scenario panel edits; text fields stay text until Check.
/// Every field bound to a scenario spec's parameter (scenario_fields.cpp)
/// takes its default from the spec, in the constructor; the comments say
/// what a field is, the spec says its default, range and unit.
struct ScenarioSettings {
  ScenarioSettings();  // the spec defaults, ring all-reduce (scenario_fields.cpp)

  std::string scenario = "allreduce";  // a collective kind (CLI spelling), "pipeline", "tp", ...
  std::string topology;               // preset name, file path, or "this" (this_machine_choice.h)
  /// topology "this" without a GPU here: the modelled machine is
  /// machine_gpus GPUs of this device profile (calibrate's TOML).
  std::string device_profile;
  int machine_gpus = 1;
  /// Real hardware (cuda): hold each transfer for the modelled link's time
  /// (link_emulation.h; RunOptions::emulate_links). Ignored on the simulator.
  bool emulate_links = false;
  std::string backend = "sim";
  /// Collectives only: run in a worker process (`shardlab-cli worker`)
  /// instead of in the app, as real hardware (cuda, mpi) always does.
  bool in_worker = false;
  bool timing_only = false;
  /// Untimed runs first and timed runs, as the CLI's -w/-n (run_iterations.h):
  /// warmup -1 is the backend's default (1 on cuda, 0 on the simulator).
  int warmup = -1;
  int iters = 1;
  // Collectives.
  std::string algo;
  int ranks = 0;
  std::string size;                   // ParseSize syntax
  std::string ring_order;             // auto | rank | "0,3,2,1"
  // Pipeline training of the small MLP (as `shardlab-cli run pipeline`).
  std::string schedule;               // gpipe | 1f1b | interleaved | zb-h1
  int stages = 0;
  int microbatches = 0;
  int chunks = 0;                     // model chunks per stage; interleaved only
  int layers = 0;
  int width = 0;
  int batch = 0;
  std::string optimizer;
  // One tensor-parallel layer (as `shardlab-cli run tp`).
  std::string tp_layer;               // column | row | mlp | attention | transformer
  int tp = 0;                         // ranks the layer is split over, one per GPU
  int tp_batch = 0;                   // B
  int tp_seq = 0;                     // S: the layer sees T = B x S tokens
  int tp_hidden = 0;                  // H
  int tp_ffn = 0;                     // F; 0: the engine's default (4H for the MLP)
  int tp_heads = 0;                   // attention heads (attention, transformer)
  bool sequence_parallel = false;     // Megatron's SP: each all-reduce becomes RS + AG
  // Data-parallel / ZeRO training of the small MLP with Adam (the engine's
  // ZeroScenario).
  int zero_stage = 0;                 // 0 (plain data parallel), 1, 2, 3
  int zero_ranks = 0;                 // N, one rank per GPU
  int zero_layers = 0;
  int zero_width = 0;
  int zero_batch = 0;                 // the global batch; each rank takes B/N rows
  int zero_steps = 0;                 // Adam steps
  std::string zero_bucket;            // fp16 gradient per bucket (ParseSize syntax)
  bool zero_overlap = true;           // a bucket's collective starts when its gradient is ready
  int zero_k = 12;                    // optimizer bytes per parameter in the formula: 12 or 8
  // DP x PP x TP training of the small MLP (as `shardlab-cli run 3d`).
  int dp = 0, pp = 0, tp3 = 0;        // the grid; rank = pp*(dp*tp) + dp*tp + tp
  int td_zero = 0;                    // 0: DP all-reduce, 1: ZeRO-1 over each DP group
  std::string td_schedule;
  int td_microbatches = 0;            // per replica
  int td_layers = 0;
  int td_width = 0;
  int td_batch = 0;
  std::string td_optimizer;
  // One expert-parallel MoE layer (as `shardlab-cli run moe`).
  int moe_ranks = 0;                  // N
  int moe_experts = 0;                // E, divisible by N
  int moe_top_k = 0;                  // k
  int moe_tokens = 0;                 // T over all ranks
  int moe_hidden = 0;                 // H
  int moe_ffn = 0;                    // F of every expert
  double moe_capacity = 0;            // capacity factor
  std::string moe_skew;               // router | uniform | hot | zipf | ...
  /// Parameters the app has no field of its own for (a collective's dtype,
  /// every parameter of a scenario only a test registered): "spec.param"
  /// -> text, as typed; absent means the spec's default.
  std::map<std::string, std::string> other_params;

  bool is_pipeline() const { return scenario == kPipelineScenario; }
  bool is_tp() const { return scenario == kTensorParallelScenario; }
  bool is_zero() const { return scenario == kZeroScenario; }
  bool is_three_d() const { return scenario == kThreeDScenario; }
  bool is_moe() const { return scenario == kMoeScenario; }
  /// A collective kind: none of the scenarios the app knows by name, nor
  /// another registered scenario.
  bool is_collective() const;
  bool operator==(const ScenarioSettings&) const = default;
};

}  // namespace shardlab::gui
