#include "engine/serving/serving_sim.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "engine/core/error.h"
#include "engine/serving/kv_cache.h"

namespace shardlab {
namespace {

[[noreturn]] void Fail(const std::string& message) { throw Error(message, ErrorKind::kInvalidInput); }

struct Slot {
  int request = 0;
  int produced = 0;   // tokens out so far (the prefill gives the first)
  bool finished = false;
};

class Replica {
 public:
  Replica(int index, const std::vector<RequestArrival>& all, std::vector<int> mine, const ServingConfig& c,
          const StepCostFn& cost, ServingResult& out)
      : index_(index), all_(all), mine_(std::move(mine)), c_(c), cost_(cost), out_(out),
        cache_(c.kv_blocks, c.kv_block_tokens) {}

  void Run() {
    TimeNs now = mine_.empty() ? 0 : all_[static_cast<std::size_t>(mine_.front())].arrival_ns;
    std::size_t next = 0;
    std::deque<int> queue;
    while (true) {
      while (next < mine_.size() && all_[static_cast<std::size_t>(mine_[next])].arrival_ns <= now) queue.push_back(mine_[next++]);
      if (slots_.empty() && queue.empty()) {
        if (next == mine_.size()) break;
        now = all_[static_cast<std::size_t>(mine_[next])].arrival_ns;
        continue;
      }
      const bool more = next < mine_.size();
      const TimeNs oldest = queue.empty() ? now : R(queue.front()).arrival_ns;
      const BatchDecision d = DecideBatch(c_.batcher, now, static_cast<int>(queue.size()), oldest,
                                          static_cast<int>(slots_.size()), more);
      std::vector<int> admitted = Admit(queue, d.admit, now);
      if (slots_.empty()) {  // nothing to run yet: sleep until the batcher or an arrival says
        TimeNs wake = more ? R(mine_[next]).arrival_ns : now;
        if (d.wake_ns >= 0) wake = std::min(wake, d.wake_ns);
        now = std::max(now, wake);
        continue;
      }
      // A continuous step that starts with a free slot while a request it
      // could hold waits breaks the policy's promise: count it.
      if (!queue.empty() && static_cast<int>(slots_.size()) < c_.batcher.max_batch &&
          cache_.BlocksNeeded(Reserve(R(queue.front())), R(queue.front()).prefix_group, R(queue.front()).prefix_tokens) <=
              cache_.free_blocks() &&
          !BatchRunsToCompletion(c_.batcher.policy))
        ++out_.idle_slot_steps;
      now = Step(now, admitted, static_cast<int>(queue.size()));
    }
  }

 private:
  const RequestArrival& R(int i) const { return all_[static_cast<std::size_t>(i)]; }
  std::int64_t Reserve(const RequestArrival& r) const {
    return BatchRunsToCompletion(c_.batcher.policy) ? pad_prompt_ + pad_output_ : std::int64_t{r.prompt} + r.output;
  }

  std::vector<int> Admit(std::deque<int>& queue, int count, TimeNs now) {
    std::vector<int> admitted;
    if (count <= 0) return admitted;
    if (BatchRunsToCompletion(c_.batcher.policy)) {
      // The batch is padded to its longest prompt and output: reserve that for each.
      pad_prompt_ = pad_output_ = 0;
      for (int k = 0; k < count; ++k) {
        pad_prompt_ = std::max(pad_prompt_, R(queue[static_cast<std::size_t>(k)]).prompt);
        pad_output_ = std::max(pad_output_, R(queue[static_cast<std::size_t>(k)]).output);
      }
      // Fewer requests when the padded batch does not fit.
      while (count > 1 && cache_.BlocksNeeded(pad_prompt_ + pad_output_, -1, 0) * count > cache_.free_blocks()) --count;
    }
    for (int k = 0; k < count && !queue.empty(); ++k) {
      const RequestArrival& r = R(queue.front());
      if (!cache_.Admit(queue.front(), Reserve(r), r.prefix_group, r.prefix_tokens)) break;
      ServedRequestTiming& t = out_.requests[static_cast<std::size_t>(queue.front())];
      t.admitted_ns = now;
      slots_.push_back({queue.front(), 0, false});
      admitted.push_back(queue.front());
      queue.pop_front();
    }
    return admitted;
  }

  TimeNs Step(TimeNs now, const std::vector<int>& admitted, int queued) {
    const bool padded = BatchRunsToCompletion(c_.batcher.policy);
    StepWork w;
    std::int64_t real = 0;
    for (const Slot& s : slots_) {
      const RequestArrival& r = R(s.request);
      if (s.produced == 0) {
        const std::int64_t p = padded ? pad_prompt_ : r.prompt;
        w.prefill_tokens += p;
        w.prefill_pairs += p * (p + 1) / 2;
        real += r.prompt;
      } else {
        ++w.decode_rows;
        w.decode_context += (padded ? pad_prompt_ : r.prompt) + s.produced;
        if (!s.finished) ++real;
      }
    }
    const TimeNs end = now + std::max<TimeNs>(cost_(w), 1);
    busy_ns_ += end - now;
    out_.computed_tokens += w.prefill_tokens + w.decode_rows;
    out_.padded_tokens += w.prefill_tokens + w.decode_rows - real;
    out_.peak_kv_blocks = std::max(out_.peak_kv_blocks, cache_.used_blocks());
    if (cache_.used_blocks() >= peak_blocks_) {
      peak_blocks_ = cache_.used_blocks();
      out_.kv_occupancy = cache_.Occupancy();
    }
    ++out_.step_count;
    if (c_.record_steps) {
      ServingStepRecord rec;
      rec.replica = index_;
      rec.start_ns = now;
      rec.end_ns = end;
      rec.work = w;
      rec.running = static_cast<int>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.finished; }));
      rec.queued = queued;
      rec.kv_blocks = cache_.used_blocks();
      for (const Slot& s : slots_) rec.batch.push_back(s.request);
      rec.prefilling = admitted;
      out_.steps.push_back(std::move(rec));
    }
    // Each slot's token comes out at the step's end.
    for (Slot& s : slots_) {
      if (s.finished) continue;
      ServedRequestTiming& t = out_.requests[static_cast<std::size_t>(s.request)];
      ++s.produced;
      if (s.produced == 1) t.first_token_ns = end;
      if (s.produced >= R(s.request).output) {
        s.finished = true;
        t.finish_ns = end;
      }
    }
    if (padded) {
      // The batch holds its slots until its longest output is out.
      if (++batch_steps_ >= pad_output_) {
        for (const Slot& s : slots_) cache_.Release(s.request);
        slots_.clear();
        batch_steps_ = 0;
      }
    } else {
      std::vector<Slot> keep;
      for (const Slot& s : slots_) {
        if (s.finished) cache_.Release(s.request);
        else keep.push_back(s);
      }
      slots_ = std::move(keep);
    }
    return end;
  }

 public:
  TimeNs busy_ns_ = 0;

 private:
  int index_;
  const std::vector<RequestArrival>& all_;
  std::vector<int> mine_;
  const ServingConfig& c_;
  const StepCostFn& cost_;
  ServingResult& out_;
  PagedKvCache cache_;
  std::vector<Slot> slots_;
  int pad_prompt_ = 0, pad_output_ = 0;
  int batch_steps_ = 0;
  std::int64_t peak_blocks_ = 0;
};

}  // namespace

Percentiles PercentilesOf(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    const std::size_t k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  double sum = 0;
  for (double x : v) sum += x;
  p.mean = sum / static_cast<double>(v.size());
  return p;
}

ServingResult SimulateServing(const std::vector<RequestArrival>& requests, const ServingConfig& c, const StepCostFn& step_ns) {
  if (c.replicas < 1) Fail("replicas: " + std::to_string(c.replicas) + " must be at least 1");
  if (c.batcher.max_batch < 1) Fail("max-batch: " + std::to_string(c.batcher.max_batch) + " must be at least 1");
  if (c.batcher.timeout_ns < 0) Fail("timeout: must be 0 or more");
  const PagedKvCache empty(c.kv_blocks, c.kv_block_tokens);
  for (const RequestArrival& r : requests) {
    const std::int64_t need = empty.BlocksNeeded(std::int64_t{r.prompt} + r.output, -1, 0);
    if (need > c.kv_blocks)
      Fail("kv-cache: request " + std::to_string(r.id) + " needs " + std::to_string(need) + " blocks of " +
           std::to_string(c.kv_block_tokens) + " tokens (prompt " + std::to_string(r.prompt) + " + output " +
           std::to_string(r.output) + "), the cache holds " + std::to_string(c.kv_blocks) + " per replica");
  }
  ServingResult out;
  out.policy = c.batcher.policy;
  out.requests.resize(requests.size());
  std::vector<std::vector<int>> mine(static_cast<std::size_t>(c.replicas));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ServedRequestTiming& t = out.requests[i];
    t.id = requests[i].id;
    t.replica = static_cast<int>(i % static_cast<std::size_t>(c.replicas));
    t.arrival_ns = requests[i].arrival_ns;
    t.prompt = requests[i].prompt;
    t.output = requests[i].output;
    mine[static_cast<std::size_t>(t.replica)].push_back(static_cast<int>(i));
  }
  TimeNs busy = 0;
  for (int r = 0; r < c.replicas; ++r) {
    Replica replica(r, requests, mine[static_cast<std::size_t>(r)], c, step_ns, out);
    replica.Run();
    busy += replica.busy_ns_;
  }
  if (c.record_steps)
    std::stable_sort(out.steps.begin(), out.steps.end(),
                     [](const ServingStepRecord& a, const ServingStepRecord& b) { return a.start_ns < b.start_ns; });
  TimeNs first = requests.empty() ? 0 : requests.front().arrival_ns, last = first;
  std::int64_t tokens = 0;
  std::vector<double> ttft, tpot, e2e;
  for (const ServedRequestTiming& t : out.requests) {
    first = std::min(first, t.arrival_ns);
    last = std::max(last, t.finish_ns);
    tokens += t.output;
    ttft.push_back(static_cast<double>(t.ttft_ns()));
    if (t.output > 1) tpot.push_back(t.tpot_ns());
    e2e.push_back(static_cast<double>(t.e2e_ns()));
  }
  out.makespan_ns = last - first;
  out.tokens_per_s = out.makespan_ns > 0 ? static_cast<double>(tokens) * 1e9 / static_cast<double>(out.makespan_ns) : 0;
  out.ttft_ns = PercentilesOf(ttft);
  out.tpot_ns = PercentilesOf(tpot);
  out.e2e_ns = PercentilesOf(e2e);
  out.busy = out.makespan_ns > 0 ? static_cast<double>(busy) / (static_cast<double>(out.makespan_ns) * c.replicas) : 0;
  out.useful = out.computed_tokens > 0
                   ? static_cast<double>(out.computed_tokens - out.padded_tokens) / static_cast<double>(out.computed_tokens)
                   : 0;
  return out;
}

}  // namespace shardlab
