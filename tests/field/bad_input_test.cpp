// Bad input for every reader: a truncated file says where it stopped, binary
// garbage is refused by name, 10^6-deep XML nesting and a 2 GB line neither
// crash nor hang, and a known format with unfamiliar lines warns and goes on.
// The deep and long inputs are made here, never committed. Truncated inputs
// are real files cut short.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

#include "engine/core/error.h"
#include "engine/field/nccl_log.h"
#include "field_test_util.h"

namespace shardlab {
namespace {

using field_test::ErrorOf;
using field_test::Gzip;
using field_test::InspectBytes;
using field_test::RealText;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The first `fraction` of `text`, cut inside a line.
std::string Cut(const std::string& text, double fraction) {
  std::size_t at = static_cast<std::size_t>(static_cast<double>(text.size()) * fraction);
  while (at > 0 && (text[at - 1] == '\n' || text[at] == '\n')) --at;
  return text.substr(0, at);
}

// --- truncated ---------------------------------------------------------------
TEST(FieldBadInput, ATruncatedTopologyXmlSaysWhereItStoppedAndWhatWasOpen) {
  const std::string text = RealText("azure-ndv4-topo.xml");
  const std::string cut = Cut(text, 0.5);
  const std::string e = ErrorOf(cut, "ndv4.xml");
  // "ndv4.xml:L:C: the file stops inside <pci> opened at line 11 (truncated?)"
  const int last_line = static_cast<int>(std::count(cut.begin(), cut.end(), '\n')) + 1;
  EXPECT_TRUE(Contains(e, "ndv4.xml:" + std::to_string(last_line) + ":")) << e;
  EXPECT_TRUE(Contains(e, "the file stops inside <")) << e;
  EXPECT_TRUE(Contains(e, "truncated")) << e;
}

TEST(FieldBadInput, ATruncatedGraphXmlSaysWhereItStopped) {
  const std::string e = ErrorOf(Cut(RealText("azure-ncv4-graph.xml"), 0.6), "graph.xml");
  EXPECT_TRUE(Contains(e, "the file stops inside <")) << e;
}

TEST(FieldBadInput, ATruncatedNcclTestsTableSaysAfterWhichRow) {
  const std::string text = RealText("superbench-8xA100-all_reduce_perf.log");
  // Cut after the 10th row's line: no "# Avg bus bandwidth" follows.
  std::size_t at = text.find("        2048           512");
  ASSERT_NE(at, std::string::npos);
  at = text.find('\n', at) + 1;
  const std::string e = ErrorOf(text.substr(0, at), "sb.log");
  const int line = static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
  EXPECT_TRUE(Contains(e, "sb.log:" + std::to_string(line) + ": the file stops inside an nccl-tests table")) << e;
  // Cut inside a row: the row itself is named.
  const std::string mid = ErrorOf(text.substr(0, at + 30), "sb.log");
  EXPECT_TRUE(Contains(mid, "sb.log:" + std::to_string(line + 1) + ": the file stops in the middle of a table row")) << mid;
}

TEST(FieldBadInput, ATruncatedSmiMatrixSaysWhereItStopped) {
  const std::string text = RealText("sglang-issue30401-8xH100-topo-m.txt");
  const std::size_t at = text.find("NV18", text.find("\nGPU5 "));
  const std::string e = ErrorOf(text.substr(0, at + 2), "topo.txt");
  EXPECT_TRUE(Contains(e, "topo.txt:7: row GPU5 has 1 cells, the header names 16 devices")) << e;  // line 7
  EXPECT_TRUE(Contains(e, "truncated")) << e;
  // Cut after a whole row: the rows that are missing say so.
  const std::string rows = ErrorOf(text.substr(0, text.find("\nGPU5 ") + 1), "topo.txt");
  EXPECT_TRUE(Contains(rows, "topo.txt:7: 5 rows for 16 devices (the file stops here: truncated?)")) << rows;
}

TEST(FieldBadInput, ATruncatedLogRingLineIsRefusedWithItsLine) {
  const std::string text = RealText("nccl-issue428-2xT4-channels.log");
  // Cut the first Channel line after its first rank.
  const std::size_t at = text.find("Channel 00/02 :    0");
  const std::string e = ErrorOf(text.substr(0, at + 20), "t4.log");
  EXPECT_TRUE(Contains(e, "t4.log:13: channel 0's ring has 1 ranks")) << e;
}

TEST(FieldBadInput, ATruncatedGzipStreamIsRefused) {
  const std::string gz = Gzip(RealText("azure-ndv4-topo.xml"));
  const std::string e = ErrorOf(gz.substr(0, gz.size() / 2), "topo.xml.gz");
  EXPECT_TRUE(Contains(e, "topo.xml.gz:")) << e;
  EXPECT_TRUE(Contains(e, "the compressed data stops here")) << e;
}

// --- a ring that is not a permutation --------------------------------------------
TEST(FieldBadInput, ARingThatIsNotAPermutationOfTheRanksIsRefused) {
  std::string text = RealText("nccl-issue428-2xT4-channels.log");
  const std::string ring = "Channel 01/02 :    0   1";
  const std::size_t at = text.find(ring);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, ring.size(), "Channel 01/02 :    1   1");
  const std::string e = ErrorOf(text, "t4.log");
  EXPECT_TRUE(Contains(e, "t4.log:14: channel 1's ring is not a permutation of the 2 ranks: repeats 1; lacks 0")) << e;
  EXPECT_EQ(RingPermutationError({0, 1, 2}, 3), "");
  EXPECT_NE(RingPermutationError({0, 3, 2}, 3), "");
  // Per-rank lines that close a ring too short are refused as well.
  std::string per_rank = RealText("nccl-issue1189-2x2xH20-per-rank-rings.log");
  per_rank += "H20-GPU-05:1789224:1789735 [0] NCCL INFO Ring 09 : 1 -> 0 -> 1\n";
  EXPECT_TRUE(Contains(ErrorOf(per_rank, "h20.log"), "ring 9 closes after 2 of 4 ranks"));
}

// --- garbage ------------------------------------------------------------------
TEST(FieldBadInput, BinaryGarbageIsRefusedByEveryReaderWithALine) {
  std::mt19937 random(7);
  std::string garbage(100000, '\0');
  for (char& c : garbage) c = static_cast<char>(random() & 0xff);
  garbage[0] = 'x';  // not a gzip header
  const std::string e = ErrorOf(garbage, "junk.bin");
  EXPECT_TRUE(e.rfind("junk.bin:", 0) == 0) << e;
  // Garbage after each format's own start: the reader, not the recogniser, refuses it.
  for (const char* start : {"<system version=\"1\">\n<cpu ", "<graphs version=\"1\">\n<graph ",
                            "\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\t"}) {
    const std::string e2 = ErrorOf(std::string(start) + garbage, "junk.bin");
    EXPECT_TRUE(e2.rfind("junk.bin:", 0) == 0) << start << ": " << e2;
  }
  // A log or nccl-tests start followed by garbage: refused or read with warnings, never a crash.
  for (const char* start : {"h:1:2 [0] NCCL INFO Channel 00/02 :    0   1\n",
                            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"}) {
    EXPECT_NO_FATAL_FAILURE((void)ErrorOf(std::string(start) + garbage, "junk.bin"));
  }
}

TEST(FieldBadInput, AnUnknownTextFileIsRefusedNamingTheKinds) {
  const std::string e = ErrorOf("hello world\nsecond line\n", "notes.txt");
  EXPECT_TRUE(Contains(e, "notes.txt:1: not a kind of file inspect reads (")) << e;
  EXPECT_TRUE(Contains(e, "nccl-topology")) << e;
  EXPECT_TRUE(Contains(ErrorOf("", "empty.txt"), "empty.txt:1: the file is empty"));
}

// --- deep nesting ---------------------------------------------------------------
std::string Nested(const std::string& open, const std::string& tag, int depth, bool close) {
  std::string text = open;
  text.reserve(text.size() + static_cast<std::size_t>(depth) * (2 * tag.size() + 5));
  // One element a line: a million on one line would stop at the line cap first.
  const std::string end_tag = "</" + tag.substr(0, tag.find(' ')) + ">\n";
  for (int i = 0; i < depth; ++i) text += "<" + tag + ">\n";
  if (close)
    for (int i = 0; i < depth; ++i) text += end_tag;
  return text;
}

TEST(FieldBadInput, AMillionNestedPciElementsAreRefusedNotRecursedInto) {
  const auto started = std::chrono::steady_clock::now();
  const std::string deep = Nested("<system version=\"1\">\n<cpu numaid=\"0\">\n", "pci", 1000000, true) + "</cpu></system>\n";
  const std::string e = ErrorOf(deep, "deep.xml");
  EXPECT_TRUE(Contains(e, "deep.xml:67: <pci> nested deeper than 64 levels")) << e;  // the 65th <pci>, line 2 + 65
  // All on one line, the line cap refuses it before XML is parsed.
  std::string one_line = deep;
  std::replace(one_line.begin() + 40, one_line.end(), '\n', ' ');
  EXPECT_TRUE(Contains(ErrorOf(one_line, "deep.xml"), "deep.xml:3: a line longer than 1 MiB"));
  // Unclosed, it is a file that stops inside an element.
  const std::string open = Nested("<system version=\"1\">\n<cpu numaid=\"0\">\n", "pci", 1000000, false);
  EXPECT_TRUE(Contains(ErrorOf(open, "open.xml"), "the file stops inside <pci>"));
  // Unknown elements a million deep: skipped with a warning, the rest read.
  const std::string unknown = Nested("<system version=\"1\">\n<cpu numaid=\"0\"></cpu>\n", "x", 1000000, true) + "</system>\n";
  const Inspection i = InspectBytes(unknown, "x.xml");
  ASSERT_EQ(i.warnings.size(), 1u);
  EXPECT_TRUE(Contains(i.warnings[0], "x.xml:3: unfamiliar element <x> in <system> (skipped)")) << i.warnings[0];
  EXPECT_TRUE(Contains(i.summary, "0 GPUs")) << i.summary;
  // And a graph whose channel nests a million <gpu>.
  const std::string graph =
      Nested("<graphs version=\"1\">\n<graph id=\"0\" nchannels=\"1\"><channel>", "gpu dev=\"0\"", 1000000, false);
  EXPECT_TRUE(Contains(ErrorOf(graph, "g.xml"), "g.xml:"));
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 60);
}

// --- a 2 GB line ------------------------------------------------------------------
TEST(FieldBadInput, ATwoGigabyteLineStopsTheReadAtTheLineCap) {
  // A sparse file: 2 GiB of NUL bytes and no newline, no disk used.
  const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) / "shardlab-long-line.log";
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "# nThread 1\n", 12), 12);
    ASSERT_EQ(::ftruncate(fd, off_t{2} << 30), 0);
    ::close(fd);
  }
  const auto started = std::chrono::steady_clock::now();
  try {
    ReadFieldFile(path.string());
    ADD_FAILURE() << "a 2 GiB line was read";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), path.string() + ":2: a line longer than 1 MiB")) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 10);
  std::filesystem::remove(path);
  // The same through gzip: 64 MiB of one line, compressed, stops at 1 MiB too.
  const std::string gz = Gzip(std::string(64 << 20, 'a'));
  EXPECT_TRUE(Contains(ErrorOf(gz, "long.gz"), "long.gz:1: a line longer than 1 MiB"));
}

TEST(FieldBadInput, OneLineJsonHasOnlyTheFileCap) {
  // Profiler traces are often one line of JSON: past the line cap, it reaches its reader.
  const std::string json = "{\"traceEvents\": [" + std::string(2 * kMaxFieldLineBytes, ' ') + "]}";
  const FieldFile file = FieldFileFromBytes(json, "one-line.json");
  EXPECT_EQ(file.text.size(), json.size());
  EXPECT_EQ(file.line_count(), 1);
  // A 300 MiB one, gzip'd, stops at the file cap with its line.
  const std::string big = Gzip("[" + std::string(300u << 20, ' '));
  EXPECT_TRUE(Contains(ErrorOf(big, "big.json.gz"), "big.json.gz:1: the file is larger than 256 MiB"));
}

TEST(FieldBadInput, ALongLineAfterEachFormatsStartIsRefusedToo) {
  const std::string line(kMaxFieldLineBytes + 10, 'x');
  for (const std::string& start : {RealText("azure-ndv2-topo.xml"), RealText("nccl-issue428-2xT4-channels.log"),
                                   RealText("superbench-8xA100-all_reduce_perf.log"),
                                   RealText("nccl-tests-issue178-8xA100-topo-m.txt")}) {
    const std::string e = ErrorOf(start + line + "\n", "long.txt");
    EXPECT_TRUE(Contains(e, "a line longer than 1 MiB")) << e;
  }
}

// --- unfamiliar content: warn and go on ------------------------------------------------
TEST(FieldBadInput, UnfamiliarElementsAndLinesWarnAndTheRestIsRead) {
  std::string xml = RealText("azure-ncv4-topo.xml");
  xml.insert(xml.find("<nic>"), "<gizmo kind=\"new\"/>\n    ");
  const Inspection i = InspectBytes(xml, "ncv4.xml");
  ASSERT_EQ(i.warnings.size(), 1u);
  EXPECT_TRUE(Contains(i.warnings[0], "ncv4.xml:8: unfamiliar element <gizmo> in <cpu> (skipped)")) << i.warnings[0];
  EXPECT_TRUE(Contains(i.summary, "4 GPUs, 1 NIC, 4 NUMA nodes, 4 NVLinks")) << i.summary;

  std::string table = RealText("superbench-8xA100-all_reduce_perf.log");
  table.insert(table.find("# Out of bounds"), "something the tool never printed\n");
  const Inspection t = InspectBytes(table, "sb.log");
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_TRUE(Contains(t.warnings[0], "sb.log:51: unfamiliar line (skipped)")) << t.warnings[0];
  EXPECT_TRUE(Contains(t.summary, "34 rows")) << t.summary;
}

}  // namespace
}  // namespace shardlab
