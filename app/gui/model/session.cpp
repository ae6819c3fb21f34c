#include "app/gui/model/session.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "engine/core/error.h"
#include "engine/core/units.h"
#include "engine/run/vector_sink.h"

namespace shardlab::gui {
namespace {

/// The panel's text fields as an engine scenario. Throws Error naming the
/// field ("scenario: ...", "algo: ...", "size: ...").
CollectiveScenario ScenarioFrom(const ScenarioSettings& settings) {
  CollectiveScenario scenario;
  try {
    scenario.kind = ParseCollectiveKind(settings.scenario);
  } catch (const Error& e) {
    throw Error("scenario: " + std::string(e.what()));
  }
  try {
    scenario.algo = ParseCollectiveAlgo(settings.algo);
  } catch (const Error& e) {
    throw Error("algo: " + std::string(e.what()));
  }
  scenario.size_bytes = ParseSize(settings.size, "size");
  scenario.ranks = settings.ranks;
  scenario.topology = settings.topology;
  scenario.backend = settings.backend;
  scenario.ring_order = settings.ring_order;
  scenario.timing_only = settings.timing_only;
  return scenario;
}

/// The ranks chunk `chunk` of rank `rank`'s output holds when the
/// collective is over (empty: the chunk is not part of the result).
std::vector<int> FinalContributors(const CollectiveParams& params, int rank, int chunk) {
  std::vector<int> all(static_cast<std::size_t>(params.ranks));
  for (int r = 0; r < params.ranks; ++r) all[static_cast<std::size_t>(r)] = r;
  switch (params.kind) {
    case CollectiveKind::kAllReduce: return all;
    case CollectiveKind::kReduceScatter: return chunk == rank ? all : std::vector<int>{};
    case CollectiveKind::kAllGather: return {chunk};
    case CollectiveKind::kBroadcast: return {params.root};
    case CollectiveKind::kReduce: return rank == params.root ? all : std::vector<int>{};
    case CollectiveKind::kAllToAll: return {chunk};
  }
  return {};
}

/// Elements in chunk `chunk` of a rank's output, cut as ChunkState cuts it.
std::int64_t ChunkElements(const CollectiveParams& params, int chunk) {
  if (params.kind == CollectiveKind::kAllToAll) return params.count / params.ranks;
  return ChunkCount(params.count, params.ranks, chunk);
}

/// "GPU3: [A0+A3, B3, ...]" -> {"A0+A3", "B3", ...}; empty when the line is
/// cut short ("... (N chunks)") or has no cells.
std::vector<std::string> CellsOfLine(const std::string& line) {
  std::vector<std::string> cells;
  const std::size_t open = line.find('[');
  const std::size_t close = line.rfind(']');
  if (open == std::string::npos || close == std::string::npos || close <= open) return cells;
  const std::string body = line.substr(open + 1, close - open - 1);
  std::size_t at = 0;
  while (at <= body.size()) {
    const std::size_t comma = body.find(", ", at);
    const std::size_t end = comma == std::string::npos ? body.size() : comma;
    cells.push_back(body.substr(at, end - at));
    if (comma == std::string::npos) break;
    at = comma + 2;
  }
  if (!cells.empty() && cells.back().rfind("...", 0) == 0) cells.clear();
  return cells;
}

/// Spreadsheet letters of a chunk, as ChunkState prints them: A..Z, AA, AB.
std::string ChunkLetters(int chunk) {
  std::string letters;
  for (int n = chunk + 1; n > 0; n = (n - 1) / 26) {
    letters.insert(letters.begin(), static_cast<char>('A' + (n - 1) % 26));
  }
  return letters;
}

/// A label from a contributor set, for rows ChunkState prints cut short:
/// "C0..7", "C(5 ranks)", or "C?" when the chunk's elements disagree.
std::string LabelFromSet(int chunk, const std::vector<int>& members, bool empty_chunk) {
  const std::string letters = ChunkLetters(chunk);
  if (members.empty()) return empty_chunk ? "_" : letters + "?";
  if (members.size() == 1) return letters + std::to_string(members.front());
  const bool consecutive = members.back() - members.front() + 1 ==
                           static_cast<int>(members.size());
  if (consecutive) {
    return letters + std::to_string(members.front()) + ".." + std::to_string(members.back());
  }
  return letters + "(" + std::to_string(members.size()) + " ranks)";
}

}  // namespace

Session::Session() = default;

Session::~Session() { Cancel(); }

int Session::num_steps() const { return prepared_ ? prepared_->plan.num_steps : 0; }

std::uint64_t Session::dropped_events() const { return queue_ ? queue_->dropped() : 0; }

const Topology& Session::CachedTopology(const std::string& name) {
  auto it = topologies_.find(name);
  if (it == topologies_.end()) {
    auto loaded = std::make_unique<const Topology>(LoadScenarioTopology(name));
    it = topologies_.emplace(name, std::move(loaded)).first;
  }
  return *it->second;
}

std::string Session::Check(const ScenarioSettings& settings) {
  if (has_last_check_ && settings == last_check_settings_) return last_check_message_;
  std::string message;
  try {
    const CollectiveScenario scenario = ScenarioFrom(settings);
    CheckCollectiveScenario(scenario, CachedTopology(scenario.topology));
  } catch (const std::exception& e) {
    message = e.what();
  }
  has_last_check_ = true;
  last_check_settings_ = settings;
  last_check_message_ = message;
  return message;
}

bool Session::Start(const ScenarioSettings& settings) {
  Cancel();
  prepared_.reset();
  store_.Clear();
  snapshots_.clear();
  outcome_ = CollectiveOutcomeSummary{};
  error_.clear();
  timing_only_reason_.clear();
  {
    std::lock_guard lock(mutex_);
    pending_snapshots_.clear();
    worker_error_.clear();
    worker_outcome_ = CollectiveOutcomeSummary{};
  }
  steps_done_ = 0;
  worker_finished_ = false;
  cancel_ = false;

  try {
    const CollectiveScenario scenario = ScenarioFrom(settings);
    prepared_ = PrepareCollective(scenario, CachedTopology(scenario.topology));
  } catch (const std::exception& e) {
    prepared_.reset();
    error_ = e.what();
    state_ = SessionState::kFailed;
    return false;
  }

  Bytes host_bytes = 0;  // the simulator keeps each element as a float
  for (const Buffer& b : prepared_->plan.buffers) host_bytes += b.count * Bytes{sizeof(float)};
  if (!prepared_->scenario.timing_only && host_bytes > kMaxCheckedHostBytes) {
    prepared_->scenario.timing_only = true;
    timing_only_reason_ = "timing only: the data would need " + FormatBytes(host_bytes) +
                          " of host memory (the limit is " + FormatBytes(kMaxCheckedHostBytes) +
                          ")";
  }

  queue_ = std::make_unique<EventQueue>(kQueueCapacity);
  state_ = SessionState::kRunning;
  worker_ = std::thread([this] { RunWorker(); });
  return true;
}

void Session::Cancel() {
  cancel_ = true;
  {
    std::lock_guard lock(mutex_);
    if (running_executor_ != nullptr) running_executor_->Cancel();
  }
  if (worker_.joinable()) worker_.join();
  if (state_ == SessionState::kRunning) {
    DrainEvents();
    std::lock_guard lock(mutex_);
    for (BufferSnapshot& s : pending_snapshots_) snapshots_.push_back(std::move(s));
    pending_snapshots_.clear();
    error_ = "run cancelled";
    state_ = SessionState::kFailed;
  }
}

void Session::DrainEvents() {
  if (!queue_) return;
  batch_.clear();
  queue_->PopBatch(batch_);
  store_.Add(batch_);
}

void Session::Poll() {
  if (state_ != SessionState::kRunning) return;
  // Read the flag first: everything the worker queued before setting it is
  // then drained below.
  const bool finished = worker_finished_.load();
  DrainEvents();
  {
    std::lock_guard lock(mutex_);
    for (BufferSnapshot& s : pending_snapshots_) snapshots_.push_back(std::move(s));
    pending_snapshots_.clear();
  }
  if (!finished) return;
  if (worker_.joinable()) worker_.join();
  DrainEvents();
  std::lock_guard lock(mutex_);
  if (worker_error_.empty()) {
    outcome_ = worker_outcome_;
    state_ = SessionState::kDone;
  } else {
    error_ = worker_error_;
    state_ = SessionState::kFailed;
  }
}

BufferSnapshot Session::Snapshot(int step, const ChunkState& chunks) const {
  const CollectiveParams& params = prepared_->params;
  const int n = params.ranks;
  BufferSnapshot snapshot;
  snapshot.step = step;
  snapshot.ranks.resize(static_cast<std::size_t>(n));
  // ChunkState's own labels ("A0..7", "C(5 ranks)*") while it prints whole rows.
  const std::vector<std::string> lines = chunks.FormatRanks();
  for (int r = 0; r < n; ++r) {
    const std::vector<std::string> labels = CellsOfLine(lines[static_cast<std::size_t>(r)]);
    std::vector<ChunkCell>& row = snapshot.ranks[static_cast<std::size_t>(r)];
    row.resize(static_cast<std::size_t>(n));
    for (int c = 0; c < n; ++c) {
      ChunkCell& cell = row[static_cast<std::size_t>(c)];
      cell.contributors = chunks.Contributors(r, c);
      const bool empty_chunk = ChunkElements(params, c) == 0;
      cell.label = static_cast<int>(labels.size()) == n ? labels[static_cast<std::size_t>(c)]
                                                        : LabelFromSet(c, cell.contributors,
                                                                       empty_chunk);
      const std::vector<int> final_set = FinalContributors(params, r, c);
      cell.complete = empty_chunk || (!final_set.empty() && cell.contributors == final_set);
    }
  }
  return snapshot;
}

void Session::RunWorker() {
  const PreparedCollective& prepared = *prepared_;
  try {
    RunOptions options;
    options.seed = prepared.scenario.seed;
    options.timing_only = prepared.scenario.timing_only;
    Executor executor(CreateBackend(prepared.scenario.backend), prepared.plan, prepared.topology,
                      options);
    {
      std::lock_guard lock(mutex_);
      running_executor_ = &executor;
    }
    // Clears running_executor_ however this scope is left.
    struct Unpublish {
      Session* session;
      ~Unpublish() {
        std::lock_guard lock(session->mutex_);
        session->running_executor_ = nullptr;
      }
    } unpublish{this};

    const Plan& plan = executor.plan();
    QueueSink to_queue(*queue_);
    CountingSink span;
    std::unique_ptr<ChunkState> chunks;
    if (prepared.params.ranks <= kMaxBufferViewRanks) {
      chunks = std::make_unique<ChunkState>(prepared.params, plan);
    }
    EventSink* tail = &span;
    std::unique_ptr<TeeSink> span_and_chunks;
    if (chunks) {
      span_and_chunks = std::make_unique<TeeSink>(span, *chunks);
      tail = span_and_chunks.get();
    }
    TeeSink sink(to_queue, *tail);

    auto publish = [&](int step) {
      if (!chunks) return;
      BufferSnapshot snapshot = Snapshot(step, *chunks);
      std::lock_guard lock(mutex_);
      pending_snapshots_.push_back(std::move(snapshot));
    };
    publish(0);
    int step = 0;
    while (!cancel_) {
      // Pace: start a step only while the queue has room for it.
      while (!cancel_ && queue_->size_approx() > queue_->capacity() / 2) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (cancel_ || !executor.StepOnce(sink)) break;
      steps_done_ = ++step;
      publish(step);
    }
    if (cancel_) {
      std::lock_guard lock(mutex_);
      worker_error_ = "run cancelled";
    } else {
      CollectiveOutcomeSummary outcome =
          SummarizeCollective(prepared, span.end_ns, span.count, executor.backend(), &plan);
      if (!timing_only_reason_.empty()) outcome.not_checked_reason = timing_only_reason_;
      std::lock_guard lock(mutex_);
      worker_outcome_ = std::move(outcome);
    }
  } catch (const Error& e) {
    std::lock_guard lock(mutex_);
    worker_error_ = e.kind() == ErrorKind::kCancelled ? "run cancelled" : e.what();
  } catch (const std::exception& e) {
    std::lock_guard lock(mutex_);
    worker_error_ = std::string("the run failed: ") + e.what();
  }
  worker_finished_ = true;
}

}  // namespace shardlab::gui
