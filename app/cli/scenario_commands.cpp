// The one table of scenarios with tables of their own: a spec name, the
// help and flags of its `run NAME` (what the spec cannot say: the paragraph
// of --help, examples, the engine's field names that are no parameter) and
// its renderers (cmd_*.cpp). Every other registered scenario runs `run
// NAME` with the defaults of scenario_run.cpp.
#include <map>

#include "app/cli/cmd_elastic.h"
#include "app/cli/commands.h"
#include "app/cli/scenario_run.h"

namespace shardlab::cli {
namespace {

RunCommand PipelineCommand() {
  RunCommand c;
  PipelineRenderers(c);
  c.json_params = {"schedule", "stages", "microbatches", "chunks", "layers", "width", "batch", "optimizer", "topology"};
  c.this_machine = true;
  c.ranks_param = "stages";
  c.bound_by = "stage";
  c.field_flags = {{"learning rate: ", "lr"}};
  c.description =
      "Splits an MLP (--layers layers of --width features) into --stages stages, one per GPU,\n"
      "and trains it for one step on a batch of --batch rows cut into --microbatches\n"
      "micro-batches, with the GPipe, 1F1B (PipeDream-Flush), interleaved 1F1B or ZB-H1\n"
      "schedule (zero bubble: the backward split into input and weight gradients).\n"
      "Activations and gradients cross stages as sends over the topology's links; the\n"
      "arithmetic is real, and the weights after the step are compared with one device\n"
      "training on the whole batch. Prints each stage's busy and idle time, the measured\n"
      "bubble beside (p-1)/m and (p-1)/(m+p-1), peak in-flight activations, and a text Gantt.";
  c.examples =
      "  shardlab-cli run pipeline --schedule 1f1b --stages 4 --microbatches 8 --topology dgx-a100\n"
      "  shardlab-cli run pipeline --schedule gpipe -p 4 -m 4 --json\n"
      "  shardlab-cli run pipeline --schedule interleaved -p 4 -m 8 --chunks 2 --layers 16\n"
      "  shardlab-cli run pipeline --schedule zb-h1 -p 4 -m 8 --width 4096 --batch 256 --timing-only\n"
      "  shardlab-cli run pipeline -p 8 -m 32 --width 8192 --layers 32 --batch 256 --timing-only\n";
  return c;
}

RunCommand TpCommand() {
  RunCommand c;
  TpRenderers(c);
  c.json_params = {"tp", "topology"};
  c.word_param = "layer";
  c.usage = "run tp-column|tp-row|tp-mlp|tp-attention|tp-transformer [flags]";
  c.seed_help = "seed of the weights, input and upstream gradient (default: 1)";
  c.this_machine = true;
  c.ranks_param = "tp";
  c.counts = RunCommand::Counts::kStepsOpsEvents;
  c.description =
      "Splits one layer over --tp GPUs as Megatron-LM does and runs its forward and backward\n"
      "pass: tp-column (weight split by columns), tp-row (by rows), tp-mlp (column then row),\n"
      "tp-attention (heads split, then a row linear) or tp-transformer (attention + MLP).\n"
      "Each split costs all-reduces of the T x H activations or their gradient (the MLP: one\n"
      "forward, one backward); with --sequence-parallel each becomes a reduce-scatter and an\n"
      "all-gather. Prints every collective with its bytes and time, the compute/communication\n"
      "split, the seed text's ring estimate 2(n-1)/n x M / B beside the simulation, and\n"
      "whether every output and gradient equals the single-device layer.\n"
      "The defaults are a small layer whose arithmetic runs in well under a second; add\n"
      "--timing-only for paper-sized layers (with --dtype fp16: nothing computed, nothing checked).";
  c.examples =
      "  shardlab-cli run tp-mlp\n"
      "  shardlab-cli run tp-transformer --tp 4 --hidden 128 --heads 8 --sequence-parallel\n"
      "  shardlab-cli run tp-mlp --tp 8 --batch 32 --seq 2048 --hidden 12288 --topology dgx-a100"
      " --dtype fp16 --timing-only\n"
      "  shardlab-cli run tp-attention --tp 4 --json --trace tp.json\n";
  return c;
}

RunCommand ZeroCommand() {
  RunCommand c;
  ZeroRenderers(c);
  c.json_params = {"ranks", "batch", "steps", "overlap", "topology"};
  c.this_machine = true;
  c.ranks_param = "ranks";
  c.counts = RunCommand::Counts::kOpsEvents;
  c.json_own_keys = {"units"};  // its count of buckets or layers
  c.description =
      "Trains an MLP with Adam (mixed precision: fp16 parameters and gradients, an fp32\n"
      "master copy and Adam's m and v) on --ranks GPUs, each on its share of the batch, as\n"
      "plain data parallelism (--zero-stage 0: all-reduce the gradients) or ZeRO: stage 1 shards\n"
      "the optimizer states, stage 2 also the gradients, stage 3 also the parameters (each\n"
      "layer all-gathered before its forward and again before its backward).\n"
      "Prints what every rank allocated by category beside the ZeRO paper's per-GPU\n"
      "formulas (4Ψ + KΨ/N, 2Ψ + (2+K)Ψ/N, (4+K)Ψ/N), the elements each rank sent per step\n"
      "beside 2(N-1)/N·Ψ (3(N-1)/N·Ψ for stage 3), and whether the parameters after the\n"
      "Adam steps equal the single-device model's. K = 12 by default (fp32 master + m + v,\n"
      "what the run holds); the seed texts use K = 8 (--k 8).\n"
      "The defaults are a small model whose arithmetic runs in well under a second; with\n"
      "--timing-only, --params 1B and the like simulate paper-sized models (nothing\n"
      "computed, nothing checked). 'shardlab-cli memory' prints the formulas alone.";
  c.examples =
      "  shardlab-cli run zero\n"
      "  shardlab-cli run zero --zero-stage 0 --ranks 8 --layers 8 --width 128 --steps 3\n"
      "  shardlab-cli run zero --zero-stage 3 --ranks 8 --params 1B --timing-only\n"
      "  shardlab-cli run zero --zero-stage 2 --ranks 8 --params 1B --bucket 100M --no-overlap "
      "--timing-only\n"
      "  shardlab-cli run zero --zero-stage 1 --k 8 --json --trace zero.json\n";
  return c;
}

RunCommand ThreeDCommand() {
  RunCommand c;
  ThreeDRenderers(c);
  c.json_params = {"dp", "pp", "tp", "schedule", "model", "topology"};
  c.usage = "run 3d --dp N --pp N --tp N [flags]";
  c.seed_help = "small: seed of the weights and data (default: 1)";
  c.field_flags = {{"zero: ", "zero-stage"}, {"zero stage: ", "zero-stage"}, {"learning rate: ", "lr"},
                   {"global batch: ", "global-batch"}};
  c.description =
      "Arranges dp*pp*tp ranks (one per GPU of the topology, in order) as Megatron-LM does:\n"
      "tp varies fastest, then dp, then pp, so TP groups are consecutive GPUs of one box.\n"
      "Each stage's layers are tensor parallel (column then row parallel, one all-reduce\n"
      "forward and one backward per pair), stages pass activations to the same (dp, tp) of\n"
      "the next stage with the 1F1B or GPipe schedule, and gradients are all-reduced over\n"
      "each DP group (or with --zero-stage 1 reduce-scattered, updated in shards, all-gathered).\n"
      "--model small trains the MLP for one real step and compares every parameter shard\n"
      "with one device; --model gpt3-175b (or another preset) times one step at paper scale\n"
      "without data and reports step time, compute/communication split, memory and MFU.";
  c.examples =
      "  shardlab-cli run 3d --dp 2 --pp 2 --tp 2 --topology dgx-a100\n"
      "  shardlab-cli run 3d --dp 1 --pp 4 --tp 2 --optimizer adam --zero-stage 1\n"
      "  shardlab-cli run 3d --dp 64 --tp 8 --pp 1 --model gpt3-175b --topology 64x-dgx-a100-ib\n"
      "  shardlab-cli run 3d --dp 8 --tp 8 --pp 8 --model gpt3-175b --topology 64x-dgx-h100-ib --micro-batch 4\n";
  return c;
}

RunCommand MoeCommand() {
  RunCommand c;
  MoeRenderers(c);
  c.json_params = {"ranks", "experts", "top_k", "tokens", "hidden", "ffn", "capacity_factor", "skew", "topology"};
  c.counts = RunCommand::Counts::kStepsOpsEvents;
  c.seed_help = "seed of the input, router and experts (default: 1)";
  c.description =
      "Spreads the E experts of a mixture-of-experts layer over --ranks GPUs (E/N each) and runs\n"
      "it: every rank routes its T/N tokens (router x.Wr, top-k, gates renormalised over the\n"
      "top k), sends each kept token to the rank of its expert (dispatch all-to-all), the\n"
      "experts run their MLPs (relu(x.W1).W2), and the results go back (combine all-to-all)\n"
      "to be summed with their gates. Each rank may send an expert at most\n"
      "C = ceil(capacity-factor x k x (T/N) / E) tokens; the rest are dropped and counted.\n"
      "The routing is computed on the host when the plan is built (the all-to-all sizes\n"
      "depend on it); --skew forces it, e.g. 'hot' sends half the tokens to expert 0, whose\n"
      "GPU becomes the straggler. Prints the tokens per expert, each rank's all-to-all bytes\n"
      "beside the hand count, the step split, the straggler, and whether the output equals\n"
      "the single-device layer.";
  c.examples =
      "  shardlab-cli run moe\n"
      "  shardlab-cli run moe --ranks 4 --experts 8 --top-k 2 --skew hot --capacity-factor 4\n"
      "  shardlab-cli run moe --ranks 8 --experts 64 --top-k 2 --tokens 4096 --skew zipf --json\n"
      "  shardlab-cli run moe --skew hot --trace moe.json\n";
  return c;
}

RunCommand InferenceCommand() {
  RunCommand c;
  InferenceRenderers(c);
  // The engine spells these fields as the flags, with '-'.
  for (const char* flag : {"max-context", "prompt-mean", "output-mean", "prefix-tokens", "kv-cache", "kv-block",
                           "max-batch", "requests-file", "check-requests"})
    c.field_flags.emplace_back(std::string(flag) + ": ", flag);
  c.description =
      "Serves a small decoder (the tensor-parallel transformer layers with a causal mask) on\n"
      "--tp x --pp x --replicas GPUs. First the first --check-requests requests run for real on the\n"
      "simulator: prefill of the prompt, then decode token by token with a KV cache, every logit\n"
      "checked against the single-device decoder; each pass sends 2 all-reduces per layer of\n"
      "T x H x dtype bytes. Then every request is served in a timing-only simulation whose steps\n"
      "are timed by a cost model (roofline of FLOPs and HBM bytes, the topology's ring all-reduce),\n"
      "under --batching static, dynamic, continuous, or all three on the same arrivals.\n"
      "Exit code 0 when the logits are correct (or not checked), 1 when they are wrong.";
  c.examples =
      "  shardlab-cli run inference\n"
      "  shardlab-cli run inference --tp 4 --replicas 2 --batching continuous --rate 50 --requests 200\n"
      "  shardlab-cli run inference --tp 2 --batching all --rate 200 --requests 1000\n"
      "  shardlab-cli run inference --requests-file reqs.txt --batching all --json\n";
  return c;
}

RunCommand CollectiveCommand() {
  RunCommand c;
  c.main = CollectiveRunMain;  // its own command (cmd_run.cpp): `run allreduce`, the word its kind
  return c;
}

RunCommand ElasticCommand() {
  RunCommand c;
  c.main = ElasticMain;  // its own command still: several plans of its own (cmd_elastic.cpp)
  return c;
}

}  // namespace

const RunCommand* FindRunCommand(const std::string& name) {
  static const std::map<std::string, RunCommand> kTable = {
      {"pipeline", PipelineCommand()},
      {"tp", TpCommand()},
      {"zero", ZeroCommand()},
      {"3d", ThreeDCommand()},
      {"moe", MoeCommand()},
      {"inference", InferenceCommand()},
      {"collective", CollectiveCommand()}, {"elastic", ElasticCommand()},
  };
  const auto it = kTable.find(name);
  return it == kTable.end() ? nullptr : &it->second;
}

}  // namespace shardlab::cli
