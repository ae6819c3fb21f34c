#include "app/gui/i18n/spec_text.h"

#include <unordered_map>

#include "app/gui/i18n/language.h"

namespace shardlab::gui {
namespace {

// A help that says what 0 (or a word such as "all") means keeps the
// English pattern "; 0: ..." so the panel finds it (scenario_fields.cpp).
constexpr SpecTextEntry kChinese[] = {
    // ---- collective ----------------------------------------------------------
    {"collective", "集合通信", "在模拟的机器上跑一次集合通信（环形或树形 All-Reduce 等）"},
    {"collective.kind", "集合通信", "哪一种集合通信（命令行里的命令词：run allreduce）"},
    {"collective.algo", "算法",
     "auto（环形；All-to-All 用直连）、ring 环形、tree 树形（All-Reduce）、direct 直连（All-to-All）"
     "或 nccl（每个 rank 一次 NCCL 调用；在模拟器上是模拟器对 NCCL 的模型）"},
    {"collective.ranks", "GPU 数", "参与的 GPU，rank r 在 GPU r 上; all: 拓扑中的全部 GPU"},
    {"collective.size", "大小", "每个 rank 的缓冲区大小：8、64K、64M、1G、1.6GB、4KiB"},
    {"collective.dtype", "数据类型", "元素类型"},
    {"collective.op", "归约运算", "归约运算（用于带归约的集合通信）"},
    {"collective.root", "根", "Broadcast 和 Reduce 的根 rank"},
    {"collective.topology", "机器", "拓扑预设（见 'topo --list'）或拓扑文件；rank r 在 GPU r 上"},
    {"collective.ring_order", "环的顺序", "auto（先走快链路）、rank（0..n-1）或一个列表，例如 0,3,2,1"},
    {"collective.timing_only", "只计时", "跳过数据：只算时间，不检查结果"},
    {"collective.on_gpus", "放在几块 GPU 上", "0: rank r 在 GPU r 上; N：所有 rank 作为前 N 块 GPU 上的虚拟设备（rank r 在 GPU r mod N 上），共享每块 GPU 的显存带宽"},
    {"collective.issue_us", "每个操作的下发开销", "按顺序把整个计划排进队列的那一个主机线程，每下发一个操作要花的时间（一次启动加两次事件记录）；第 k 个操作要等 k 个这样的时间过去; 0: 不花时间"},
    {"collective.graph_op_us", "图中每个操作的延迟", "CUDA Graph 重放：依赖别的操作的操作，在输入完成后再过这么久才开始（主机不再逐个下发）; 0: 立即开始"},
    {"collective.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"collective.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"collective.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"collective.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    // ---- memory --------------------------------------------------------------
    {"memory", "ZeRO 显存（公式）", "按公式算出每个 GPU 上 ZeRO 的模型状态字节数（不运行）"},
    {"memory.params", "参数量", "参数量：175B、7.5B（ZeRO 论文的例子）、1.3B、350M"},
    {"memory.ranks", "GPU 数", "数据并行的 GPU 数 N"},
    {"memory.zero_stage", "ZeRO 阶段", "ZeRO 阶段（命令行会在四个阶段的表里标出它）"},
    {"memory.k", "K", "每个参数的优化器字节数：12（ZeRO 论文）、8（种子文本）"},
    // ---- moe -----------------------------------------------------------------
    {"moe", "混合专家（MoE）", "一层专家并行的 MoE：路由、All-to-All 分发、专家计算、合并"},
    {"moe.ranks", "GPU 数", "专家并行的 rank 数 N，每个 GPU 一个（GPU 0..N-1）"},
    {"moe.experts", "专家数", "专家数 E，是 N 的倍数"},
    {"moe.top_k", "Top k", "每个 token 选几个专家，1..E"},
    {"moe.tokens", "token 数", "所有 rank 上的 token 总数 T，是 N 的倍数"},
    {"moe.hidden", "隐藏维度", "隐藏维度 H"},
    {"moe.ffn", "FFN", "每个专家的中间宽度 F"},
    {"moe.capacity_factor", "容量因子",
     "每个专家在每个 rank 上的容量，是平均份额 k x (T/N) / E 的倍数；大于 0（E/k 时从不丢弃）"},
    {"moe.skew", "倾斜", "router（路由器自己的 top-k）、uniform 均匀、hot（每个偶数 token 的首选都是专家 0）或 zipf"},
    {"moe.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    {"moe.timing_only", "只计时", "跳过算术：只算时间（用于大的层）"},
    // ---- pipeline ------------------------------------------------------------
    {"pipeline", "流水线并行", "用流水线并行训练一个小 MLP 一步"},
    {"pipeline.schedule", "调度", "流水线的调度方式"},
    {"pipeline.stages", "阶段数", "流水线阶段数 p，每个阶段一个 GPU（阶段 s 在 GPU s 上）"},
    {"pipeline.microbatches", "微批次数", "每一步的微批次数 m；必须整除批大小"},
    {"pipeline.chunks", "模型块数", "每个阶段的模型块数 v，只用于 interleaved; 0: 那里取 2，其余取 1"},
    {"pipeline.layers", "层数", "MLP 的层数"},
    {"pipeline.width", "宽度", "MLP 每一层的特征数"},
    {"pipeline.batch", "批大小", "一个训练步的行数（全局批）"},
    {"pipeline.optimizer", "优化器", "优化器"},
    {"pipeline.lr", "学习率", "学习率; 0: 用优化器的默认值（sgd 0.05，adam 0.001）"},
    {"pipeline.topology", "机器", "拓扑预设或拓扑文件；阶段 s 在 GPU s 上"},
    {"pipeline.timing_only", "只计时", "跳过算术：只算时间（用于论文规模的模型）"},
    // ---- plan ----------------------------------------------------------------
    {"plan", "3D 规划器", "3D 规划器：列出每一种 DP x PP x TP 布局，按解析的单步时间排序"},
    {"plan.model", "模型", "模型预设"},
    {"plan.ranks", "GPU 数", "要规划的 GPU，取拓扑的前 N 个; 0: 全部"},
    {"plan.topology", "机器", "集群预设或拓扑文件"},
    {"plan.gpu_memory", "GPU 显存", "每个 GPU 的显存，例如 80G、40G; 0: 用 GPU 自己的"},
    {"plan.global_batch", "全局批", "每次优化器更新的序列数; 0: 用模型的"},
    {"plan.dp", "DP", "要查看的一种布局（dp、pp、tp 都为 0 表示不看）"},
    {"plan.pp", "PP", "要查看的一种布局"},
    {"plan.tp", "TP", "要查看的一种布局"},
    // ---- 3d ------------------------------------------------------------------
    {"3d", "3D 并行（DP x PP x TP）", "一个 DP x PP x TP 训练步：检查小 MLP 的结果，或给一个预设模型计时"},
    {"3d.dp", "DP", "数据并行的副本数"},
    {"3d.pp", "PP", "流水线阶段数"},
    {"3d.tp", "TP", "每个阶段里张量并行的 rank 数（相邻的 GPU）"},
    {"3d.zero_stage", "ZeRO 阶段", "0: 数据并行的 All-Reduce; 1: 在每个 DP 组内做 ZeRO-1"},
    {"3d.schedule", "调度", "流水线的调度方式"},
    {"3d.model", "模型", "small（真实的小 MLP）或模型预设（按论文规模计时，不带数据）"},
    {"3d.microbatches", "微批次数", "small：每个副本的微批次数"},
    {"3d.layers", "层数", "small：MLP 层数；tp > 1 时必须是偶数"},
    {"3d.width", "宽度", "small：每层的特征数，是 tp 的倍数"},
    {"3d.batch", "批大小", "small：全局批的行数"},
    {"3d.optimizer", "优化器", "small：优化器"},
    {"3d.lr", "学习率", "small：学习率; 0: 用优化器的默认值（sgd 0.05，adam 0.001）"},
    {"3d.buckets", "梯度桶数", "论文规模：每个 GPU 上数据并行的梯度桶数"},
    {"3d.micro_batch", "微批大小", "论文规模：每个微批次的序列数; 0: 用预设的"},
    {"3d.global_batch", "全局批", "论文规模：每一步的序列数; 0: 用预设的"},
    {"3d.topology", "机器", "有 dp*pp*tp 个 GPU 的预设或拓扑文件，例如 64x-dgx-a100-ib"},
    {"3d.timing_only", "只计时", "预设模型为 true（不带数据）；small 为 false（命令行里 --model 隐含它）"},
    // ---- tp ------------------------------------------------------------------
    {"tp", "张量并行", "一层张量并行（Megatron）的前向和反向"},
    {"tp.layer", "层", "哪一种层（命令行里的命令词：run tp-mlp）"},
    {"tp.batch", "批大小", "每一步的序列数 B"},
    {"tp.seq", "序列长度", "每个序列的 token 数 S；这一层看到 T = B x S 行"},
    {"tp.hidden", "隐藏维度", "隐藏维度 H"},
    {"tp.ffn", "FFN",
     "被切分的宽度 F：MLP 的中间宽度，或线性层的输出（列切分）/输入（行切分）特征数；必须能被 tp 整除; "
     "0: mlp 和 transformer 取 4H，线性层取 H"},
    {"tp.heads", "注意力头数", "注意力头数，是 tp 的倍数; 0: H 是 128 的倍数时取 H/128，否则取 4"},
    {"tp.tp", "TP", "这一层切分到的 rank 数，rank r 在 GPU r 上"},
    {"tp.sequence_parallel", "序列并行",
     "Megatron 的序列并行：每个 All-Reduce 变成一个 Reduce-Scatter 加一个 All-Gather（mlp、attention、transformer）"},
    {"tp.dtype", "数据类型", "元素类型；fp16 和 bf16 只计时（按 Tensor Core 的速率）"},
    {"tp.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    {"tp.timing_only", "只计时", "跳过数据：只算时间，不检查结果"},
    // ---- zero ----------------------------------------------------------------
    {"zero", "数据并行 / ZeRO", "用数据并行 / ZeRO 阶段 0-3 和 Adam 训练一个小 MLP"},
    {"zero.zero_stage", "ZeRO 阶段", "0（普通数据并行）、1、2 或 3"},
    {"zero.ranks", "GPU 数", "数据并行的 rank 数 N，每个 GPU 一个（GPU 0..N-1）"},
    {"zero.params", "参数量",
     "模型大小：1B、7.5B、350M；代替层数 x 宽度，构造最接近的 MLP（宽度取 2 的幂，层数凑够参数量）; 0: 层数 x 宽度"},
    {"zero.layers", "层数", "MLP 的层数"},
    {"zero.width", "宽度", "MLP 每一层的特征数"},
    {"zero.batch", "批大小", "每一步的全局行数；必须能被 rank 数整除; 0: 每个 rank 8 行"},
    {"zero.steps", "训练步数", "训练步数，每步一次 Adam 更新"},
    {"zero.bucket", "梯度桶", "阶段 0-2 的梯度桶大小（PyTorch DDP 默认 25 MiB）"},
    {"zero.overlap", "重叠", "反向传播中每个桶一准备好就归约（命令行：--no-overlap 等整个反向结束后再归约）"},
    {"zero.lr", "学习率", "Adam 的学习率"},
    {"zero.k", "K", "公式一栏里每个参数的优化器字节数：12（ZeRO 论文）或 8（种子文本）"},
    {"zero.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    {"zero.timing_only", "只计时", "跳过算术：只算时间和显存（用于论文规模的模型）"},
    // ---- dp-train ------------------------------------------------------------
    {"dp-train", "数据并行训练技巧", "在多个 GPU 上做数据并行 SGD，打开一种训练技巧，和同步 fp32 基线比较损失曲线"},
    {"dp-train.ranks", "GPU 数", "数据并行的 rank 数 N，每个 GPU 一个"},
    {"dp-train.layers", "层数", "MLP 的层数"},
    {"dp-train.width", "宽度", "每一层的特征数"},
    {"dp-train.batch", "批大小", "每个优化器步的全局行数；切成 rank 数 x 累积次数个微批次"},
    {"dp-train.steps", "步数", "优化器步数"},
    {"dp-train.lr", "学习率", "SGD 的学习率"},
    {"dp-train.accumulate", "梯度累积", "梯度累积：每次 All-Reduce 之前累积的微批次数 K"},
    {"dp-train.recompute", "重计算", "激活重计算：none 不重算、full 全部重算、selective 只重算指定的层"},
    {"dp-train.recompute_layers", "重计算的层", "selective：要重计算的层，例如 0,2"},
    {"dp-train.precision", "精度", "fp32，或带动态损失缩放的 fp16 混合精度"},
    {"dp-train.loss_scale", "损失缩放", "fp16：初始损失缩放系数 S"},
    {"dp-train.scale_growth_interval", "缩放增长间隔", "fp16：连续多少个正常步之后 S 翻倍"},
    {"dp-train.overflow", "溢出", "fp16：rank R 的梯度在第 STEP 步出现 inf（一个坏批次）"},
    {"dp-train.compress", "梯度压缩", "梯度压缩：none、fp16、int8（每个桶一个缩放系数）或 topk（只发最大的一部分）"},
    {"dp-train.topk", "top-k 比例", "topk：每个 rank 发送的梯度元素比例，在 (0, 1] 内"},
    {"dp-train.compress_bucket", "压缩桶", "int8：共用一个缩放系数的元素数"},
    {"dp-train.error_feedback", "误差反馈", "topk：把没发出去的部分留到下一步再加上（误差反馈）"},
    {"dp-train.local_steps", "本地步数", "本地 SGD：两次平均各 rank 参数之间的本地步数 H"},
    {"dp-train.staleness", "陈旧度", "陈旧同步 SGD：快的 rank 最多能领先慢的 rank 几步（S）"},
    // ---- inference -----------------------------------------------------------
    {"inference", "推理服务", "在 tp x pp x 副本 个 GPU 上服务一个小解码器：预填充、带 KV 缓存的解码、批处理策略"},
    {"inference.tp", "张量并行", "每个副本的张量并行 GPU 数（必须整除注意力头数）"},
    {"inference.pp", "流水线并行", "每个副本的流水线阶段数（最多等于层数）"},
    {"inference.replicas", "副本数", "路由器后面轮流接请求的模型副本数"},
    {"inference.microbatches", "微批次数", "真实运行里每个副本的请求微批次数（pp > 1 时）"},
    {"inference.batching", "批处理", "static 静态、dynamic 动态、continuous 连续，或 all（同一批到达请求上并排比较）"},
    {"inference.max_batch", "最大批", "每个副本的槽位数：一个批次里最多的请求数"},
    {"inference.timeout_ms", "超时", "动态批处理：最早到的请求最多等多久凑满一批"},
    {"inference.rate", "到达率", "每秒的泊松到达请求数（大于 0）"},
    {"inference.requests", "请求数", "要服务的请求数"},
    {"inference.prompt_mean", "提示长度", "提示的 token 数，在 [均值/2, 3 均值/2] 内均匀分布"},
    {"inference.output_mean", "输出长度", "输出的 token 数，在 [均值/2, 3 均值/2] 内均匀分布"},
    {"inference.prefix_tokens", "共享前缀", "所有请求共享的提示前缀（它的整块 KV 只存一份）"},
    {"inference.requests_file", "请求文件", "请求文件（每行 arrival_ms prompt output [prefix]）"},
    {"inference.model", "模型", "服务模拟计时用的模型（small 是真实运行的小解码器）"},
    {"inference.layers", "层数", "小解码器的层数 L（真实运行）"},
    {"inference.hidden", "隐藏维度", "隐藏维度 H"},
    {"inference.heads", "注意力头数", "注意力头数（tp 的倍数）"},
    {"inference.ffn", "FFN", "MLP 的宽度 F（0 表示 4H）"},
    {"inference.vocab", "词表", "词表大小 V"},
    {"inference.max_context", "最大上下文", "真实运行的 KV 缓存为每个请求保留的位置数"},
    {"inference.kv_cache", "KV 缓存", "每个 GPU 的 KV 缓存显存，按分页块分配（0 表示 GPU 显存减去权重后的 90%）"},
    {"inference.kv_block", "KV 块", "每个 KV 缓存块的 token 数"},
    {"inference.int8", "int8 权重", "解码的矩阵乘用 int8 权重（每个输出通道一个缩放系数）"},
    {"inference.check_requests", "检查的请求", "真实运行服务并逐个检查 logits 的请求数"},
    {"inference.seed", "种子", "到达过程、权重和 token id 的随机种子"},
    // ---- elastic -------------------------------------------------------------
    {"elastic", "弹性恢复", "丢掉一个 GPU 的数据并行训练：检查点、重启、重新切分、继续"},
    {"elastic.ranks", "GPU 数", "故障之前的数据并行 rank 数 N"},
    {"elastic.steps", "步数", "作业要完成的训练步数 T"},
    {"elastic.checkpoint_every", "检查点间隔", "每 C 步写一个检查点文件"},
    {"elastic.fail_rank", "失效 rank", "rank R 在第 STEP 个训练步中失效（0 .. 步数-1）"},
    {"elastic.recovery", "恢复方式", "shrink（用剩下的 N-1 个 rank 继续）或 replace（换一个新 GPU 顶替 R）"},
    {"elastic.layers", "层数", "MLP 的层数"},
    {"elastic.width", "宽度", "每一层的特征数"},
    {"elastic.batch", "批大小", "一步的行数；必须能分给 N 个 rank，也能分给之后剩下的 rank"},
    {"elastic.lr", "学习率", "SGD 的学习率"},
    {"elastic.checkpoint_dir", "检查点目录", "检查点文件的目录（auto：系统临时目录下新建一个）"},
    {"dp-train.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（陈旧同步 SGD 用它）"},
    {"dp-train.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    {"elastic.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"elastic.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"elastic.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    {"inference.dtype", "数据类型", "真实运行的小解码器的元素类型"},
    {"inference.timing_only", "只计时", "跳过真实运行：只模拟服务的时间，不检查 logits"},
    {"inference.topology", "机器", "拓扑预设或拓扑文件；rank r 在 GPU r 上"},
    // ---- trace-compare -------------------------------------------------------
    {"trace-compare", "模型与实测",
     "随项目提供的一份实测 trace，对照模拟器为记录它的那台机器建立的模型：两个时间、比值和差距的最大来源"},
    {"trace-compare.trace_file", "实测 trace", "实测的 trace 文件，仓库里的路径"},
    {"trace-compare.plan_settings", "计划设置",
     "这份 trace 的场景和设置（例如 'pipeline stages=4 microbatches=8'），用来重建它的计划"},
    {"trace-compare.profile_file", "设备配置",
     "GPU 的设备配置文件，仓库里的路径；none：用 trace 自己记录的"},
    {"trace-compare.model_gpus", "GPU 数", "trace 没有记录机器时，模型用几块配置文件中的 GPU"},
    {"trace-compare.model_issue", "发出方式",
     "这次运行怎样发出操作：recorded（按 trace 记录，没有则逐个发出）、graph（CUDA 图）或 eager（逐个）"},
    // ---- faults of every scenario (fault_params.cpp) -------------------------
    {"moe.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"moe.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"moe.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"moe.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    {"pipeline.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"pipeline.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"pipeline.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"pipeline.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    {"3d.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"3d.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"3d.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"3d.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    {"tp.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"tp.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"tp.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"tp.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    {"zero.slow_rank", "慢 rank", "掉队者：rank R 的计算和发送都慢 FACTOR 倍（模拟器）"},
    {"zero.throttle_link", "限速链路", "节点（或 GPU rank）A 与 B 之间的链路每个方向只跑 GBPS"},
    {"zero.fail_link", "断开链路", "A 与 B 之间的链路在逻辑步 STEP 断开（模拟器）"},
    {"zero.fail_rank", "失效 rank", "rank R 在第 STEP 步的操作之前停止（模拟器）"},
    // ---- units ---------------------------------------------------------------
    {"unit:GPUs", "个 GPU", ""},
    {"unit:bytes", "字节", ""},
    {"unit:rank", "号 rank", ""},
    {"unit:parameters", "个参数", ""},
    {"unit:stage", "阶段", ""},
    {"unit:bytes/parameter", "字节/参数", ""},
    {"unit:experts", "个专家", ""},
    {"unit:tokens", "个 token", ""},
    {"unit:features", "个特征", ""},
    {"unit:micro-batches", "个微批次", ""},
    {"unit:chunks", "块", ""},
    {"unit:layers", "层", ""},
    {"unit:rows", "行", ""},
    {"unit:sequences", "个序列", ""},
    {"unit:buckets", "个桶", ""},
    {"unit:heads", "个头", ""},
    {"unit:steps", "步", ""},
    {"unit:elements", "个元素", ""},
    {"unit:ms", "毫秒", ""},
    {"unit:us", "微秒", ""},
    {"unit:requests/s", "个请求/秒", ""},
    {"unit:stages", "个阶段", ""},
};

bool Chinese() { return CurrentLanguage() == Language::kChinese; }

}  // namespace

std::span<const SpecTextEntry> ChineseSpecTexts() { return kChinese; }

const SpecTextEntry* FindChineseSpecText(std::string_view key) {
  static const auto* index = [] {
    auto* map = new std::unordered_map<std::string_view, const SpecTextEntry*>();
    for (const SpecTextEntry& e : kChinese) map->emplace(e.key, &e);
    return map;
  }();
  const auto it = index->find(key);
  return it != index->end() ? it->second : nullptr;
}

std::string SpecTitle(const ScenarioSpec& spec) {
  const SpecTextEntry* e = Chinese() ? FindChineseSpecText(spec.name) : nullptr;
  if (e != nullptr) return e->title;
  return spec.title.empty() ? spec.name : spec.title;
}

std::string SpecSummary(const ScenarioSpec& spec) {
  const SpecTextEntry* e = Chinese() ? FindChineseSpecText(spec.name) : nullptr;
  return e != nullptr ? e->help : spec.summary;
}

std::string ParamLabel(const ScenarioSpec& spec, const ParamSpec& param, const std::string& english_label) {
  const SpecTextEntry* e = Chinese() ? FindChineseSpecText(spec.name + "." + param.name) : nullptr;
  return e != nullptr ? e->title : english_label;
}

std::string ParamHelp(const ScenarioSpec& spec, const ParamSpec& param) {
  const SpecTextEntry* e = Chinese() ? FindChineseSpecText(spec.name + "." + param.name) : nullptr;
  return e != nullptr ? e->help : param.help;
}

std::string UnitText(const std::string& unit) {
  const SpecTextEntry* e = Chinese() && !unit.empty() ? FindChineseSpecText("unit:" + unit) : nullptr;
  return e != nullptr ? e->title : unit;
}

}  // namespace shardlab::gui
