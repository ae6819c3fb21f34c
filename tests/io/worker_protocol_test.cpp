#include "engine/io/worker_protocol.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <random>
#include <vector>

#include "engine/core/error.h"
#include "engine/scenarios/scenario_record.h"
#include "engine/scenarios/scenario_spec.h"

namespace shardlab {
namespace {

std::vector<WorkerRecord> OneOfEach() {
  std::vector<WorkerRecord> records;
  WorkerRecord r;
  r.type = RecordType::kHello;
  r.hello.backend = "sim";
  r.hello.ranks = 8;
  r.hello.processes = 2;
  records.push_back(r);
  r = {};
  r.type = RecordType::kPlan;
  r.plan = PlanRecord{"ring all-reduce x8", 8, 14, 448, 8};
  records.push_back(r);
  r = {};
  r.type = RecordType::kEvent;
  r.event.op = 17;
  r.event.rank = 3;
  r.event.peer = 4;
  r.event.step = 2;
  r.event.collective_seq = 5;
  r.event.lane = Lane::kSend;
  r.event.kind = OpKind::kSend;
  r.event.clock = ClockKind::kCudaEvent;
  r.event.status = EventStatus::kCancelled;
  r.event.start_ns = 1234.5;
  r.event.end_ns = 9876.25;
  r.event.bytes = (std::int64_t{1} << 40) + 3;
  records.push_back(r);
  r = {};
  r.type = RecordType::kBufferSnapshot;
  r.snapshot.step = 3;
  r.snapshot.buffer = 2;
  r.snapshot.values = {1.0f, -2.5f, 3e20f, 0.0f};
  records.push_back(r);
  r = {};
  r.type = RecordType::kStepDone;
  r.step = 7;
  records.push_back(r);
  r = {};
  r.type = RecordType::kRunsDone;
  r.step = 5;
  records.push_back(r);
  r = {};
  r.type = RecordType::kRunDone;
  r.done.steps = 14;
  r.done.events = 448;
  r.done.size_bytes = 1024;
  r.done.time_ns = 1e6;
  r.done.algbw_gbps = 12.5;
  r.done.busbw_gbps = 21.875;
  r.done.checked = true;
  r.done.correct = true;
  r.done.max_abs_err = 1e-7;
  r.done.elements_checked = 2048;
  r.done.not_checked_reason = "";
  r.done.warmup = 2;
  r.done.spans_ns = {1.25e6, 0.875e6, 0.875e6};
  records.push_back(r);
  r = {};
  r.type = RecordType::kError;
  r.error.kind = WorkerErrorKind::kStickyCuda;
  r.error.code = 700;
  r.error.message = "cudaErrorIllegalAddress";
  records.push_back(r);
  r = {};
  r.type = RecordType::kScenario;
  r.scenario.scenario = "pipeline";
  r.scenario.params = {{"schedule", "zb-h1"}, {"stages", "4"}, {"timing_only", "true"}, {"note", ""}};
  records.push_back(r);
  records.push_back(MakeCommand(RecordType::kStep, 3));
  records.push_back(MakeCommand(RecordType::kPlay));
  records.push_back(MakeCommand(RecordType::kPause));
  records.push_back(MakeCommand(RecordType::kCancel));
  records.push_back(MakeCommand(RecordType::kQuit));
  return records;
}

void ExpectSame(const WorkerRecord& a, const WorkerRecord& b) {
  ASSERT_EQ(a.type, b.type);
  switch (a.type) {
    case RecordType::kHello:
      EXPECT_EQ(a.hello.protocol_version, b.hello.protocol_version);
      EXPECT_EQ(a.hello.backend, b.hello.backend);
      EXPECT_EQ(a.hello.ranks, b.hello.ranks);
      EXPECT_EQ(a.hello.processes, b.hello.processes);
      break;
    case RecordType::kPlan:
      EXPECT_EQ(a.plan.name, b.plan.name);
      EXPECT_EQ(a.plan.ranks, b.plan.ranks);
      EXPECT_EQ(a.plan.steps, b.plan.steps);
      EXPECT_EQ(a.plan.ops, b.plan.ops);
      EXPECT_EQ(a.plan.buffers, b.plan.buffers);
      break;
    case RecordType::kEvent:
      EXPECT_EQ(a.event.op, b.event.op);
      EXPECT_EQ(a.event.rank, b.event.rank);
      EXPECT_EQ(a.event.peer, b.event.peer);
      EXPECT_EQ(a.event.step, b.event.step);
      EXPECT_EQ(a.event.collective_seq, b.event.collective_seq);
      EXPECT_EQ(a.event.lane, b.event.lane);
      EXPECT_EQ(a.event.kind, b.event.kind);
      EXPECT_EQ(a.event.clock, b.event.clock);
      EXPECT_EQ(a.event.status, b.event.status);
      EXPECT_EQ(a.event.start_ns, b.event.start_ns);
      EXPECT_EQ(a.event.end_ns, b.event.end_ns);
      EXPECT_EQ(a.event.bytes, b.event.bytes);
      break;
    case RecordType::kBufferSnapshot:
      EXPECT_EQ(a.snapshot.step, b.snapshot.step);
      EXPECT_EQ(a.snapshot.buffer, b.snapshot.buffer);
      EXPECT_EQ(a.snapshot.values, b.snapshot.values);
      break;
    case RecordType::kRunDone:
      EXPECT_EQ(a.done.steps, b.done.steps);
      EXPECT_EQ(a.done.events, b.done.events);
      EXPECT_EQ(a.done.size_bytes, b.done.size_bytes);
      EXPECT_EQ(a.done.time_ns, b.done.time_ns);
      EXPECT_EQ(a.done.algbw_gbps, b.done.algbw_gbps);
      EXPECT_EQ(a.done.busbw_gbps, b.done.busbw_gbps);
      EXPECT_EQ(a.done.checked, b.done.checked);
      EXPECT_EQ(a.done.correct, b.done.correct);
      EXPECT_EQ(a.done.max_abs_err, b.done.max_abs_err);
      EXPECT_EQ(a.done.wrong, b.done.wrong);
      EXPECT_EQ(a.done.elements_checked, b.done.elements_checked);
      EXPECT_EQ(a.done.not_checked_reason, b.done.not_checked_reason);
      EXPECT_EQ(a.done.warmup, b.done.warmup);
      EXPECT_EQ(a.done.spans_ns, b.done.spans_ns);
      break;
    case RecordType::kError:
      EXPECT_EQ(a.error.kind, b.error.kind);
      EXPECT_EQ(a.error.code, b.error.code);
      EXPECT_EQ(a.error.message, b.error.message);
      break;
    case RecordType::kScenario:
      EXPECT_EQ(a.scenario, b.scenario);
      break;
    default: EXPECT_EQ(a.step, b.step);
  }
}

std::vector<std::uint8_t> Encode(const WorkerRecord& r) {
  std::vector<std::uint8_t> bytes;
  EncodeRecord(r, bytes);
  return bytes;
}

TEST(WorkerProtocol, EveryRecordTypeSurvivesARoundTrip) {
  for (const WorkerRecord& r : OneOfEach()) {
    SCOPED_TRACE(RecordTypeName(r.type));
    const std::vector<std::uint8_t> bytes = Encode(r);
    WorkerRecord back;
    const DecodeResult result = DecodeRecord(bytes, &back);
    ASSERT_EQ(result.status, DecodeStatus::kRecord) << result.error;
    EXPECT_EQ(result.consumed, bytes.size());
    ExpectSame(r, back);
  }
}

TEST(WorkerProtocol, ReaderSplitsAStreamFedOneByteAtATime) {
  std::vector<std::uint8_t> stream;
  const std::vector<WorkerRecord> records = OneOfEach();
  for (const WorkerRecord& r : records) EncodeRecord(r, stream);
  RecordReader reader;
  std::vector<WorkerRecord> got;
  for (std::uint8_t byte : stream) {
    reader.Feed(std::span<const std::uint8_t>(&byte, 1));
    WorkerRecord r;
    DecodeStatus status;
    while ((status = reader.Next(&r)) == DecodeStatus::kRecord) got.push_back(r);
    ASSERT_NE(status, DecodeStatus::kBad) << reader.error();
  }
  ASSERT_EQ(got.size(), records.size());
  for (std::size_t i = 0; i < got.size(); ++i) ExpectSame(records[i], got[i]);
  EXPECT_EQ(reader.EndOfStreamError(), "");
}

TEST(WorkerProtocol, EveryTruncationNeedsMoreAndEndingThereIsAnError) {
  for (const WorkerRecord& r : OneOfEach()) {
    SCOPED_TRACE(RecordTypeName(r.type));
    const std::vector<std::uint8_t> bytes = Encode(r);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      WorkerRecord out;
      const DecodeResult result =
          DecodeRecord(std::span<const std::uint8_t>(bytes.data(), n), &out);
      ASSERT_EQ(result.status, DecodeStatus::kNeedMore) << "at " << n << ": " << result.error;
    }
    RecordReader reader;
    reader.Feed(std::span<const std::uint8_t>(bytes.data(), bytes.size() - 1));
    WorkerRecord out;
    EXPECT_EQ(reader.Next(&out), DecodeStatus::kNeedMore);
    EXPECT_NE(reader.EndOfStreamError().find("ended inside a record"), std::string::npos);
  }
}

TEST(WorkerProtocol, OversizeLengthIsRejectedFromTheHeaderAlone) {
  std::vector<std::uint8_t> bytes = Encode(MakeCommand(RecordType::kStep, 1));
  bytes.resize(kRecordHeaderBytes);
  bytes[8] = 0xff;  // length 0xffffffff: must not be awaited
  bytes[9] = 0xff;
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  WorkerRecord out;
  const DecodeResult result = DecodeRecord(bytes, &out);
  ASSERT_EQ(result.status, DecodeStatus::kBad);
  EXPECT_NE(result.error.find("exceeds its limit"), std::string::npos) << result.error;

  // A snapshot whose count claims more floats than the cap.
  WorkerRecord snap;
  snap.type = RecordType::kBufferSnapshot;
  snap.snapshot.values = {1, 2};
  bytes = Encode(snap);
  bytes[kRecordHeaderBytes + 8 + 3] = 0x7f;  // count's top byte
  EXPECT_EQ(DecodeRecord(bytes, &out).status, DecodeStatus::kBad);

  // A string longer than its cap.
  WorkerRecord error;
  error.type = RecordType::kError;
  error.error.message = "x";
  bytes = Encode(error);
  bytes[kRecordHeaderBytes + 5 + 2] = 0x10;  // length 0x100001
  const DecodeResult long_string = DecodeRecord(bytes, &out);
  ASSERT_EQ(long_string.status, DecodeStatus::kBad);
  EXPECT_NE(long_string.error.find("error.message"), std::string::npos) << long_string.error;
}

TEST(WorkerProtocol, EncodingCutsLongMessagesAndRefusesHugeSnapshots) {
  WorkerRecord error;
  error.type = RecordType::kError;
  error.error.message.assign(kMaxRecordString + 100, 'e');
  WorkerRecord back;
  ASSERT_EQ(DecodeRecord(Encode(error), &back).status, DecodeStatus::kRecord);
  EXPECT_EQ(back.error.message.size(), kMaxRecordString);

  WorkerRecord snap;
  snap.type = RecordType::kBufferSnapshot;
  snap.snapshot.values.resize(kMaxSnapshotFloats + 1);
  std::vector<std::uint8_t> out = {1, 2, 3};
  EXPECT_THROW(EncodeRecord(snap, out), std::exception);
  EXPECT_EQ(out.size(), 3u);  // nothing half-written
}

TEST(WorkerProtocol, GarbageIsABadStreamWithAClearMessage) {
  const std::vector<std::uint8_t> text = {'s', 'h', 'a', 'r', 'd', 'l', 'a', 'b'};
  WorkerRecord out;
  const DecodeResult result = DecodeRecord(text, &out);
  ASSERT_EQ(result.status, DecodeStatus::kBad);
  EXPECT_NE(result.error.find("not a ShardLab worker record"), std::string::npos);

  std::vector<std::uint8_t> bytes = Encode(MakeCommand(RecordType::kPlay));
  bytes[3] = 9;  // another protocol version
  EXPECT_NE(DecodeRecord(bytes, &out).error.find("version 9"), std::string::npos);

  bytes = Encode(MakeCommand(RecordType::kPlay));
  bytes[4] = 99;  // no such type
  EXPECT_NE(DecodeRecord(bytes, &out).error.find("unknown record type 99"), std::string::npos);

  WorkerRecord event;
  event.type = RecordType::kEvent;
  bytes = Encode(event);
  bytes[kRecordHeaderBytes + 20] = 7;  // lane 7
  EXPECT_NE(DecodeRecord(bytes, &out).error.find("lane 7"), std::string::npos);

  // A payload longer than its fields: bytes left over.
  WorkerRecord error;
  error.type = RecordType::kError;
  error.error.message = "m";
  bytes = Encode(error);
  bytes.push_back(0);
  ++bytes[8];
  EXPECT_NE(DecodeRecord(bytes, &out).error.find("left over"), std::string::npos);
}

// A "runs done" record comes after a run: it counts from 1.
TEST(WorkerProtocol, ARunsDoneRecordOfNoRunIsRefused) {
  WorkerRecord out;
  const std::vector<std::uint8_t> one = Encode(MakeCommand(RecordType::kRunsDone, 1));
  ASSERT_EQ(DecodeRecord(one, &out).status, DecodeStatus::kRecord);
  EXPECT_EQ(out.step, 1);
  const DecodeResult r = DecodeRecord(Encode(MakeCommand(RecordType::kRunsDone, 0)), &out);
  ASSERT_EQ(r.status, DecodeStatus::kBad);
  EXPECT_NE(r.error.find("runs done 0"), std::string::npos) << r.error;
}

// Protocol 3: a run-done record ends with its warm-up count, the number of
// timed runs and their spans. A count the spans do not match, no timed run,
// a negative warm-up or a span that is no time is one clear error.
TEST(WorkerProtocol, ARunDoneRecordWithABadCountOfTimedRunsIsRefused) {
  WorkerRecord done;
  done.type = RecordType::kRunDone;
  done.done.warmup = 1;
  done.done.spans_ns = {3000, 2000, 4000};
  const std::vector<std::uint8_t> good = Encode(done);
  WorkerRecord out;
  ASSERT_EQ(DecodeRecord(good, &out).status, DecodeStatus::kRecord);
  EXPECT_EQ(out.done.spans_ns, done.done.spans_ns);
  EXPECT_EQ(out.done.warmup, 1);
  // The count (a u32) sits before the 3 spans, the warm-up (an i32) before it.
  const std::size_t count_at = good.size() - 3 * 8 - 4;
  const std::size_t warmup_at = count_at - 4;
  auto with = [&](std::size_t at, std::uint32_t value) {
    std::vector<std::uint8_t> bytes = good;
    for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
    return DecodeRecord(bytes, &out);
  };
  for (std::uint32_t count : {2u, 4u}) {  // says 2 or 4, carries 3
    const DecodeResult r = with(count_at, count);
    ASSERT_EQ(r.status, DecodeStatus::kBad) << count;
    EXPECT_EQ(r.error, "run done record: says " + std::to_string(count) + " timed runs but carries 24 bytes of spans");
  }
  DecodeResult r = with(count_at, 0);
  ASSERT_EQ(r.status, DecodeStatus::kBad);
  EXPECT_EQ(r.error, "run done record: 0 timed runs (a run has 1 to 1048576)");
  r = with(count_at, kMaxTimedRuns + 1);
  ASSERT_EQ(r.status, DecodeStatus::kBad);
  EXPECT_NE(r.error.find("1048577 timed runs"), std::string::npos) << r.error;
  r = with(warmup_at, static_cast<std::uint32_t>(-1));
  ASSERT_EQ(r.status, DecodeStatus::kBad);
  EXPECT_EQ(r.error, "run done record: warm-up count -1 is negative");
  // A span that is no time (NaN's top bytes in the last span).
  std::vector<std::uint8_t> nan = good;
  nan[nan.size() - 1] = 0x7f;
  nan[nan.size() - 2] = 0xf8;
  r = DecodeRecord(nan, &out);
  ASSERT_EQ(r.status, DecodeStatus::kBad);
  EXPECT_NE(r.error.find("span is not a finite time"), std::string::npos) << r.error;
  // Cut inside the spans: the stream waits for the rest, and ending there is an error.
  EXPECT_EQ(DecodeRecord(std::span<const std::uint8_t>(good.data(), good.size() - 5), &out).status,
            DecodeStatus::kNeedMore);
  // The worker never writes a record without a timed run, nor too many.
  done.done.spans_ns.clear();
  std::vector<std::uint8_t> bytes;
  EXPECT_THROW(EncodeRecord(done, bytes), Error);
  EXPECT_TRUE(bytes.empty());
  done.done.spans_ns.assign(kMaxTimedRuns + 1, 1.0);
  EXPECT_THROW(EncodeRecord(done, bytes), Error);
}

TEST(WorkerProtocol, RandomBytesNeverCrashOrOverAllocate) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::uint8_t> bytes(rng() % 64);
    for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng());
    if (round % 2 == 0 && bytes.size() >= 4) {  // a valid start, random rest
      bytes[0] = 'S';
      bytes[1] = 'L';
      bytes[2] = 'W';
      bytes[3] = kWorkerProtocolVersion;
    }
    WorkerRecord out;
    const DecodeResult result = DecodeRecord(bytes, &out);
    if (result.status == DecodeStatus::kRecord) {
      EXPECT_LE(result.consumed, bytes.size());
    }
  }
}

TEST(WorkerProtocol, ScenarioRecordRefusesACountItsPayloadCannotHold) {
  WorkerRecord r;
  r.type = RecordType::kScenario;
  r.scenario.scenario = "tp";
  r.scenario.params = {{"tp", "4"}};
  std::vector<std::uint8_t> bytes = Encode(r);
  // The count sits after the name (u32 length + "tp").
  bytes[kRecordHeaderBytes + 4 + 2] = 200;
  WorkerRecord out;
  const DecodeResult result = DecodeRecord(bytes, &out);
  ASSERT_EQ(result.status, DecodeStatus::kBad);
  EXPECT_NE(result.error.find("cannot fit"), std::string::npos) << result.error;
  // And a value longer than a setting may be is not cut on the way out.
  r.scenario.params[0].second.assign(kMaxScenarioText + 1, '7');
  EXPECT_THROW(Encode(r), Error);
}

// A scenario only this test binary has: its settings travel as any other's.
struct TestScenarioRegistration {
  TestScenarioRegistration() {
    ScenarioSpec spec;
    spec.name = "io-test-scenario";
    spec.title = "a scenario of the protocol test";
    spec.summary = "registered by tests/io/worker_protocol_test.cpp";
    auto param = [](const char* name, ParamType type, const char* default_text, const char* unit, double min,
                    double max, std::vector<std::string> choices) {
      ParamSpec p;
      p.name = name;
      p.type = type;
      p.default_text = default_text;
      p.unit = unit;
      p.min = min;
      p.max = max;
      p.choices = std::move(choices);
      p.help = std::string("the test's ") + name;
      return p;
    };
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const ParamSpec count = param("count", ParamType::kInteger, "3", "things", 1, 9, {});
    const ParamSpec mode = param("mode", ParamType::kChoice, "slow", "", -kInf, kInf, {"slow", "fast"});
    const ParamSpec big = param("big", ParamType::kSize, "1K", "bytes", 1, kInf, {});
    const ParamSpec on = param("on", ParamType::kBool, "false", "", -kInf, kInf, {});
    spec.params = {count, mode, big, on};
    RegisterScenario(spec);
  }
} const test_scenario_registration;

/// A valid value of `p` other than its default, or "" when the spec leaves
/// none (a one-choice list, a range of one value).
std::string AnotherValue(const ParamSpec& p) {
  std::vector<std::string> candidates;
  switch (p.type) {
    case ParamType::kInteger:
    case ParamType::kNumber: {
      const double d = std::atof(p.default_text.c_str());
      for (double v : {d + 1, d - 1, p.min, p.max}) {
        if (std::isfinite(v)) candidates.push_back(std::to_string(static_cast<long long>(v)));
      }
      break;
    }
    case ParamType::kSize: candidates = {"3K", "5M", "7", "1G"}; break;
    case ParamType::kCount: candidates = {"2M", "1.5B", "96"}; break;
    case ParamType::kChoice: candidates = p.choices; break;
    case ParamType::kBool: candidates = {"true", "false"}; break;
    case ParamType::kText: candidates = {p.default_text + "x", "0,1"}; break;
    case ParamType::kTopology: candidates = {"dgx1-v100", "dgx-a100"}; break;
  }
  for (const std::string& c : candidates) {
    if (c != p.default_text && CheckParamValue(p, c).empty()) return c;
  }
  return "";
}

WorkerRecord ThroughTheWire(const ScenarioParams& params) {
  WorkerRecord r;
  r.type = RecordType::kScenario;
  r.scenario = ScenarioRecordOf(params);
  WorkerRecord back;
  const std::vector<std::uint8_t> bytes = Encode(r);
  const DecodeResult result = DecodeRecord(bytes, &back);
  EXPECT_EQ(result.status, DecodeStatus::kRecord) << result.error;
  return back;
}

// For every scenario and parameter: the default travels as the spec's
// default, any other value comes back equal, and a value the spec's range
// or choices refuse is refused when the record is read.
TEST(WorkerProtocol, EveryScenarioSettingComesBackEqual) {
  int changed = 0;
  bool saw_test_scenario = false;
  for (const ScenarioSpec& spec : Scenarios()) {
    SCOPED_TRACE(spec.name);
    saw_test_scenario |= spec.name == "io-test-scenario";
    const ScenarioParams defaults(spec);
    const ScenarioParams read = ParamsFromScenarioRecord(ThroughTheWire(defaults).scenario);
    ASSERT_EQ(read.All().size(), spec.params.size());
    for (const ParamSpec& p : spec.params) EXPECT_EQ(read.Text(p.name), p.default_text) << p.name;
    for (const ParamSpec& p : spec.params) {
      SCOPED_TRACE(p.name);
      const std::string other = AnotherValue(p);
      if (!other.empty()) {
        ScenarioParams sent(spec);
        sent.Set(p.name, other);
        const ScenarioParams back = ParamsFromScenarioRecord(ThroughTheWire(sent).scenario);
        EXPECT_EQ(back.Text(p.name), other);
        EXPECT_EQ(back.All(), sent.All());
        ++changed;
      }
      // Out of the spec's range: the record is refused, naming the parameter.
      std::string outside;
      if ((p.type == ParamType::kInteger || p.type == ParamType::kNumber) && std::isfinite(p.min)) {
        outside = std::to_string(static_cast<long long>(p.min) - 1);
      } else if (p.type == ParamType::kChoice) {
        outside = "no-such-choice";
      } else if (p.type == ParamType::kBool) {
        outside = "maybe";
      }
      if (outside.empty()) continue;
      ScenarioRecord bad = ScenarioRecordOf(defaults);
      for (auto& [name, value] : bad.params) {
        if (name == p.name) value = outside;
      }
      try {
        ParamsFromScenarioRecord(bad);
        ADD_FAILURE() << p.name << " = " << outside << " was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(p.name + ": "), std::string::npos) << e.what();
      }
    }
  }
  EXPECT_TRUE(saw_test_scenario);
  EXPECT_GE(changed, 4);
}

TEST(WorkerProtocol, AMismatchSaysWhichSettingDiffers) {
  const ScenarioRecord sent{"collective", {{"kind", "allreduce"}, {"size", "16M"}, {"ranks", "4"}}};
  EXPECT_EQ(ScenarioRecordMismatch(sent, sent), "");
  ScenarioRecord other = sent;
  other.params[1].second = "64M";
  EXPECT_EQ(ScenarioRecordMismatch(sent, other), "size = 64M where 16M was asked");
  other = sent;
  other.params.pop_back();
  other.params.emplace_back("root", "0");
  EXPECT_EQ(ScenarioRecordMismatch(sent, other), "ranks = (missing) where 4 was asked, root = 0 (not asked)");
  other = sent;
  other.scenario = "pipeline";
  EXPECT_EQ(ScenarioRecordMismatch(sent, other), "scenario pipeline where collective was asked");
}

TEST(WorkerProtocol, AScenarioRecordMustNameEveryParameterOnceAndNoOther) {
  const ScenarioSpec* spec = FindScenario("io-test-scenario");
  ASSERT_NE(spec, nullptr);
  const ScenarioRecord good = ScenarioRecordOf(ScenarioParams(*spec));
  ScenarioRecord missing = good;
  missing.params.pop_back();
  EXPECT_THROW(ParamsFromScenarioRecord(missing), Error);
  ScenarioRecord twice = good;
  twice.params.push_back(twice.params.front());
  EXPECT_THROW(ParamsFromScenarioRecord(twice), Error);
  ScenarioRecord stranger = good;
  stranger.params.emplace_back("colour", "red");
  EXPECT_THROW(ParamsFromScenarioRecord(stranger), Error);
  ScenarioRecord unknown = good;
  unknown.scenario = "no-such-scenario";
  EXPECT_THROW(ParamsFromScenarioRecord(unknown), Error);
  EXPECT_EQ(ParamsFromScenarioRecord(good).All(), ScenarioParams(*spec).All());
}

}  // namespace
}  // namespace shardlab
