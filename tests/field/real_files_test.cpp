// Every real file of tests/data/real/ read by its reader, and what it gives
// held against the same counts made another way: a regex scan of the file's
// text in the test (the count grep gives is in each comment). The scans share
// no code with the readers, so a reader that miscounts fails here.
#include <gtest/gtest.h>

#include <set>

#include "engine/field/nccl_graph_xml.h"
#include "engine/field/nccl_log.h"
#include "engine/field/nccl_tests_output.h"
#include "engine/field/nccl_topology_xml.h"
#include "engine/field/smi_topology.h"
#include "field_test_util.h"

namespace shardlab {
namespace {

using field_test::Matches;
using field_test::RealPath;
using field_test::RealText;

// --- NCCL topology XML -------------------------------------------------------
// GPUs: every GPU's <pci> has a display class (grep -c ' class="0x03'; the space
// keeps out <nvlink tclass="0x030200">).
// NICs: each <net> (grep -c '<net '), plus each NIC <pci> of class 0x02xxxx
// that closes itself, having no <net> inside (grep -c 'class="0x02.*/>').
// NUMA nodes: grep -c '<cpu '. NVLinks: grep -c '<nvlink '.
struct TopologyCase {
  const char* file;
  int gpus, nics, numa, nvlinks;  // as grep counts them, for the record
};

class RealTopology : public ::testing::TestWithParam<TopologyCase> {};

TEST_P(RealTopology, CountsMatchAScanOfTheXml) {
  const TopologyCase& c = GetParam();
  const std::string text = RealText(c.file);
  const int gpus = Matches(text, R"( class="0x03[0-9a-fA-F]*")");  // not tclass=
  const int nics = Matches(text, R"(<net )") + Matches(text, R"( class="0x02[0-9a-fA-F]*"[^>]*/>)");
  const int numa = Matches(text, R"(<cpu )");
  const int nvlinks = Matches(text, R"(<nvlink )");
  // The scan itself counts what the comment says grep counts.
  EXPECT_EQ(gpus, c.gpus);
  EXPECT_EQ(nics, c.nics);
  EXPECT_EQ(numa, c.numa);
  EXPECT_EQ(nvlinks, c.nvlinks);

  const NcclTopology t = ParseNcclTopologyXml(ReadFieldFile(RealPath(c.file)));
  EXPECT_EQ(static_cast<int>(t.gpus.size()), gpus);
  EXPECT_EQ(static_cast<int>(t.nics.size()), nics);
  EXPECT_EQ(t.numa_nodes(), numa);
  EXPECT_EQ(t.nvlinks(), nvlinks);
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  EXPECT_EQ(InspectFieldFile(ReadFieldFile(RealPath(c.file))).kind, "nccl-topology");
}

INSTANTIATE_TEST_SUITE_P(Field, RealTopology,
                         ::testing::Values(TopologyCase{"azure-ndv2-topo.xml", 8, 1, 2, 0},
                                           TopologyCase{"azure-ndv4-topo.xml", 8, 8, 4, 0},
                                           TopologyCase{"azure-ndv5-topo.xml", 8, 8, 2, 0},
                                           TopologyCase{"azure-ncv4-topo.xml", 4, 1, 4, 4},
                                           TopologyCase{"modal-gvisor-b200-nccl_topo.xml", 8, 13, 2, 8}));

TEST(RealTopology, ADumpKeepsEachGpusSmRankAndNvlinkTarget) {
  const NcclTopology t = ParseNcclTopologyXml(ReadFieldFile(RealPath("modal-gvisor-b200-nccl_topo.xml")));
  const std::string text = RealText("modal-gvisor-b200-nccl_topo.xml");
  EXPECT_EQ(Matches(text, R"(sm="100")"), 8);
  for (std::size_t i = 0; i < t.gpus.size(); ++i) {
    EXPECT_EQ(t.gpus[i].sm, 100);
    EXPECT_EQ(t.gpus[i].rank, static_cast<int>(i));  // rank="0".."7" in file order
    ASSERT_EQ(t.gpus[i].nvlinks.size(), 1u);
    EXPECT_TRUE(t.gpus[i].nvlinks[0].to_nvswitch());
    EXPECT_EQ(t.gpus[i].nvlinks[0].count, 18);
  }
  // speed="400000" (Mb/s) on 8 of the 13 <net>.
  EXPECT_EQ(Matches(text, R"(speed="400000")"), 8);
  int fast = 0;
  for (const NcclTopoNic& n : t.nics) fast += n.speed_mbps == 400000 ? 1 : 0;
  EXPECT_EQ(fast, 8);
}

// --- NCCL graph XML ----------------------------------------------------------
TEST(RealGraph, GraphsAndChannelsMatchAScan) {
  const std::string text = RealText("azure-ncv4-graph.xml");
  const int graphs = Matches(text, R"(<graph )");       // grep -c '<graph ' -> 3
  const int channels = Matches(text, R"(<channel>)");   // grep -c '<channel>' -> 10
  EXPECT_EQ(graphs, 3);
  EXPECT_EQ(channels, 10);
  const NcclGraphs g = ParseNcclGraphXml(ReadFieldFile(RealPath("azure-ncv4-graph.xml")));
  EXPECT_EQ(static_cast<int>(g.graphs.size()), graphs);
  EXPECT_EQ(g.channels(), channels);
  EXPECT_EQ(g.gpus(), 4);  // dev="0".."3"
  ASSERT_EQ(g.graphs.size(), 3u);
  EXPECT_EQ(NcclGraphPatternName(g.graphs[0].pattern), "ring");  // pattern="4"
  // Every channel is a permutation of the 4 GPUs (4 <gpu dev> each).
  for (const NcclGraph& graph : g.graphs)
    for (const NcclGraphChannel& c : graph.channels) EXPECT_EQ(std::set<int>(c.gpus.begin(), c.gpus.end()).size(), 4u);
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_EQ(InspectFieldFile(ReadFieldFile(RealPath("azure-ncv4-graph.xml"))).kind, "nccl-graph");
}

// --- nvidia-smi topo -m -------------------------------------------------------
// GPUs: rows that start with GPU (grep -c '^GPU'); NICs: rows '^NIC[0-9]';
// NVLinks: NV# cells in the GPU rows' GPU columns, halved (each pair twice).
struct SmiCase {
  const char* file;
  int gpus, nics, nvlinks, numa;
};

class RealSmi : public ::testing::TestWithParam<SmiCase> {};

TEST_P(RealSmi, CountsMatchAScanOfTheMatrix) {
  const SmiCase& c = GetParam();
  const std::string text = RealText(c.file);
  const int gpus = Matches(text, R"((^|\n)GPU[0-9]+ )");
  const int nics = Matches(text, R"((^|\n)NIC[0-9]+ )");
  int nv_cells = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    if (name.rfind("GPU", 0) != 0) continue;
    for (int col = 0; col < gpus; ++col) {
      std::string cell;
      words >> cell;
      nv_cells += std::regex_match(cell, std::regex("NV[0-9]+")) ? 1 : 0;
    }
  }
  EXPECT_EQ(gpus, c.gpus);
  EXPECT_EQ(nics, c.nics);
  EXPECT_EQ(nv_cells / 2, c.nvlinks);

  const SmiTopology t = ParseSmiTopology(ReadFieldFile(RealPath(c.file)));
  EXPECT_EQ(t.gpus(), gpus);
  EXPECT_EQ(t.nics(), nics);
  EXPECT_EQ(t.nvlinks(), nv_cells / 2);
  EXPECT_EQ(t.numa_nodes(), c.numa);  // the distinct values of the NUMA Affinity column: 0 and 1
  EXPECT_TRUE(t.warnings.empty()) << t.warnings.front();
  EXPECT_EQ(InspectFieldFile(ReadFieldFile(RealPath(c.file))).kind, "nvidia-smi-topology");
}

INSTANTIATE_TEST_SUITE_P(Field, RealSmi,
                         ::testing::Values(SmiCase{"nccl-tests-issue178-8xA100-topo-m.txt", 8, 0, 4, 2},
                                           SmiCase{"sglang-issue30401-8xH100-topo-m.txt", 8, 8, 28, 2}));

TEST(RealSmi, TheNicLegendNamesEachNic) {
  const SmiTopology t = ParseSmiTopology(ReadFieldFile(RealPath("sglang-issue30401-8xH100-topo-m.txt")));
  const std::string text = RealText("sglang-issue30401-8xH100-topo-m.txt");
  EXPECT_EQ(static_cast<int>(t.nic_legend.size()), Matches(text, R"(NIC[0-9]+: mlx5_)"));  // 8
  ASSERT_FALSE(t.nic_legend.empty());
  EXPECT_EQ(t.nic_legend[3], (std::pair<std::string, std::string>{"NIC3", "mlx5_3"}));
  EXPECT_EQ(t.matrix[0][8], "PIX");  // GPU0's own NIC0
}

// --- nccl-tests output -----------------------------------------------------------
// Rows: lines whose first word (after an mpirun tag) is a byte count followed by
// a count and a type; ranks: the "#  Rank N" lines.
struct TestsCase {
  const char* file;
  int rows, ranks;
};

class RealNcclTests : public ::testing::TestWithParam<TestsCase> {};

TEST_P(RealNcclTests, RowsAndRanksMatchAScan) {
  const TestsCase& c = GetParam();
  const std::string text = RealText(c.file);
  const int rows = Matches(text, R"((^|\n)(\[1,0\]<stdout>:)? *[0-9]+ +[0-9]+ +(float|half|int32|double) )");
  const int ranks = Matches(text, R"(#\s+Rank\s+[0-9]+ )");
  EXPECT_EQ(rows, c.rows);
  EXPECT_EQ(ranks, c.ranks);

  const NcclTestsOutput out = ReadNcclTestsOutput(ReadFieldFile(RealPath(c.file)));
  EXPECT_EQ(out.rows(), rows);
  EXPECT_EQ(out.ranks(), ranks);
  ASSERT_EQ(out.tables.size(), 1u);
  EXPECT_TRUE(out.tables[0].avg_busbw_gbps.has_value());
  EXPECT_EQ(InspectFieldFile(ReadFieldFile(RealPath(c.file))).kind, "nccl-tests");
}

INSTANTIATE_TEST_SUITE_P(Field, RealNcclTests,
                         ::testing::Values(TestsCase{"superbench-8xA100-all_reduce_perf.log", 34, 8},
                                           TestsCase{"awsome-p5-2node-all_reduce_perf.txt", 32, 0}));

TEST(RealNcclTests, TheLastRowReadsAsWritten) {
  // superbench: "8589934592 2147483648 float sum 63896 134.44 235.26 N/A 63959 134.30 235.03 N/A"
  const NcclTestsOutput out = ReadNcclTestsOutput(ReadFieldFile(RealPath("superbench-8xA100-all_reduce_perf.log")));
  const NcclTestsRow& last = out.tables[0].rows.back();
  EXPECT_EQ(last.size_bytes, 8589934592LL);
  EXPECT_EQ(last.count, 2147483648LL);
  EXPECT_DOUBLE_EQ(last.out_of_place.busbw_gbps, 235.26);
  EXPECT_DOUBLE_EQ(last.in_place.time_us, 63959);
  EXPECT_FALSE(last.out_of_place.wrong.has_value());  // N/A
  EXPECT_FALSE(last.root.has_value());                // the older layout has no root column
  EXPECT_DOUBLE_EQ(*out.tables[0].avg_busbw_gbps, 68.4048);
  EXPECT_EQ(out.devices[7].name, "A100-SXM4-40GB");
  // awsome: the newer layout, every line tagged [1,0]<stdout>:, "#wrong" 0.
  const NcclTestsOutput p5 = ReadNcclTestsOutput(ReadFieldFile(RealPath("awsome-p5-2node-all_reduce_perf.txt")));
  const NcclTestsRow& big = p5.tables[0].rows.back();
  EXPECT_EQ(big.size_bytes, 17179869184LL);
  EXPECT_DOUBLE_EQ(big.in_place.busbw_gbps, 483.35);
  EXPECT_EQ(big.root, -1);
  EXPECT_EQ(big.out_of_place.wrong, 0.0);
}

// --- NCCL logs -------------------------------------------------------------------
TEST(RealNcclLog, ChannelRingsTreesVersionAndDevicesOfIssue428) {
  const std::string text = RealText("nccl-issue428-2xT4-channels.log");
  const int ring_lines = Matches(text, R"(NCCL INFO Channel [0-9]+/[0-9]+ :( +[0-9]+)+\n)");  // 2
  const int tree_entries = Matches(text, R"(\[[0-9]+\] -?[0-9]+/-?[0-9]+/-?[0-9]+->)");      // 2
  EXPECT_EQ(ring_lines, 2);
  const NcclLog log = ParseNcclLog(ReadFieldFile(RealPath("nccl-issue428-2xT4-channels.log")));
  EXPECT_EQ(log.complete_rings(), ring_lines);
  EXPECT_EQ(static_cast<int>(log.trees.size()), tree_entries);
  EXPECT_EQ(log.nccl_version, "2.8.3+cuda10.0");
  EXPECT_EQ(log.ranks, 2);
  EXPECT_TRUE(log.ranks_inferred);  // NCCL 2.8 printed no nRanks line here
  EXPECT_EQ(log.hosts, std::vector<std::string>{"ai-vtraining-prd-10-193-84-3"});
  EXPECT_EQ(log.tests.devices.size(), 2u);  // its two "#   Rank" lines
  EXPECT_EQ(InspectFieldFile(ReadFieldFile(RealPath("nccl-issue428-2xT4-channels.log"))).kind, "nccl-log");
}

TEST(RealNcclLog, TreesOfIssue507) {
  const std::string text = RealText("nccl-issue507-dgx2-trees.log");
  // Each Trees line lists channels [0]..[11]: 12 distinct channels.
  std::set<std::string> channels;
  const std::regex entry(R"(\[([0-9]+)\] [-0-9/]+->([0-9]+)->)");
  int entries = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), entry); it != std::sregex_iterator(); ++it) {
    channels.insert((*it)[1]);
    ++entries;
  }
  EXPECT_EQ(channels.size(), 12u);
  EXPECT_EQ(entries, 48);  // 4 lines x 12
  const NcclLog log = ParseNcclLog(ReadFieldFile(RealPath("nccl-issue507-dgx2-trees.log")));
  EXPECT_EQ(log.trees.size(), channels.size());
  int nodes = 0;
  for (const NcclLogTree& t : log.trees) nodes += static_cast<int>(t.nodes.size());
  EXPECT_EQ(nodes, entries);
  // "6/-1/-1->5->4": rank 5's parent is 4 and its child 6, in every channel.
  for (const NcclLogTree& t : log.trees) {
    ASSERT_EQ(t.nodes.front().rank, 5);
    EXPECT_EQ(t.nodes.front().parent, 4);
    EXPECT_EQ(t.nodes.front().children, std::vector<int>{6});
  }
  EXPECT_TRUE(log.rings.empty());
  EXPECT_EQ(log.hosts.size(), 0u);  // the issue stripped the host:pid prefix
  // No nRanks line: the ranks are at least the highest one named (child 6) + 1.
  int highest = -1;
  const std::regex number(R"(-?[0-9]+)");
  const std::regex triple(R"([-0-9/]+->[0-9]+->[-0-9]+)");
  for (auto t = std::sregex_iterator(text.begin(), text.end(), triple); t != std::sregex_iterator(); ++t) {
    const std::string s = t->str();
    for (auto n = std::sregex_iterator(s.begin(), s.end(), number); n != std::sregex_iterator(); ++n)
      highest = std::max(highest, std::stoi(n->str()));
  }
  EXPECT_EQ(highest, 6);
  EXPECT_EQ(log.ranks, highest + 1);
  EXPECT_TRUE(log.ranks_inferred);
}

TEST(RealNcclLog, PerRankRingLinesOfIssue1189AssembleWhereTheyCoverEveryRank) {
  const std::string text = RealText("nccl-issue1189-2x2xH20-per-rank-rings.log");
  // An independent scan: per channel, the ranks its "Ring NN : a -> b -> c" lines name.
  std::map<int, std::set<int>> named;
  const std::regex ring(R"(Ring ([0-9]+) : ([0-9]+) -> ([0-9]+) -> ([0-9]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), ring); it != std::sregex_iterator(); ++it) {
    for (int g = 2; g <= 4; ++g) named[std::stoi((*it)[1])].insert(std::stoi((*it)[g]));
  }
  EXPECT_EQ(named.size(), 6u);  // channels 2..7
  const NcclLog log = ParseNcclLog(ReadFieldFile(RealPath("nccl-issue1189-2x2xH20-per-rank-rings.log")));
  EXPECT_EQ(log.ranks, 4);  // "comm ... rank 3 nRanks 4 nNodes 2"
  EXPECT_FALSE(log.ranks_inferred);
  EXPECT_EQ(log.nodes, 2);
  ASSERT_EQ(log.rings.size(), named.size());
  for (const NcclLogRing& r : log.rings) {
    EXPECT_EQ(r.complete, named[r.channel].size() == 4u) << "channel " << r.channel;
    EXPECT_EQ(std::set<int>(r.ranks.begin(), r.ranks.end()), named[r.channel]);
  }
  // Channel 6: "2 -> 0 -> 1" (rank 0) and "0 -> 1 -> 3" (rank 1): the ring 0 1 3 2.
  EXPECT_EQ(log.rings[4].ranks, (std::vector<int>{0, 1, 3, 2}));
  EXPECT_EQ(log.hosts, (std::vector<std::string>{"H20-GPU-05", "H20-GPU-06"}));
  // Trees: 8 channels from the "Trees [0] ... [7]" lines.
  EXPECT_EQ(log.trees.size(), 8u);
}

TEST(RealNcclLog, TransportsOfIssue644) {
  const std::string text = RealText("nccl-issue644-8gpu-transports.log");
  const NcclLog log = ParseNcclLog(ReadFieldFile(RealPath("nccl-issue644-8gpu-transports.log")));
  EXPECT_EQ(static_cast<int>(log.transports.size()), Matches(text, " via "));  // 14
  const auto counts = log.TransportCounts();
  EXPECT_EQ(counts.at("P2P/direct pointer"), Matches(text, "via P2P/direct pointer"));        // 7
  EXPECT_EQ(counts.at("direct shared memory"), Matches(text, "via direct shared memory"));    // 7
  EXPECT_EQ(log.ranks, 8);  // ranks 0..7 in "N[busid]"
}

TEST(RealFiles, EachIsRecognisedByContentWhateverItsName) {
  for (const char* name : {"azure-ndv4-topo.xml", "azure-ncv4-graph.xml", "sglang-issue30401-8xH100-topo-m.txt",
                           "superbench-8xA100-all_reduce_perf.log", "nccl-issue428-2xT4-channels.log"}) {
    const std::string expected = InspectFieldFile(ReadFieldFile(RealPath(name))).kind;
    EXPECT_EQ(field_test::InspectBytes(RealText(name), "renamed.bin").kind, expected) << name;
    EXPECT_EQ(field_test::InspectBytes(field_test::Gzip(RealText(name)), "renamed.gz").kind, expected) << name;
  }
}

}  // namespace
}  // namespace shardlab
