// The host list of a job across machines: parsing `--host` and hostfiles,
// placing ranks on hosts in order, and the mpirun command it becomes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "../common/run_program.h"
#include "engine/core/error.h"
#include "engine/launch/mpi_launcher.h"

namespace shardlab {
namespace {

TEST(MpiHosts, AHostListGivesNamesAndSlotsInOrder) {
  const auto hosts = ParseHostList("node-a:4,node-b:2,10.0.0.3", "--host");
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[0].name, "node-a");
  EXPECT_EQ(hosts[0].slots, 4);
  EXPECT_EQ(hosts[1].slots, 2);
  EXPECT_EQ(hosts[2].name, "10.0.0.3");
  EXPECT_EQ(hosts[2].slots, 1);
  EXPECT_THROW(ParseHostList("a:4,,b:4", "--host"), Error);
  EXPECT_THROW(ParseHostList("a:0", "--host"), Error);
  EXPECT_THROW(ParseHostList("a:x", "--host"), Error);
  EXPECT_THROW(ParseHostList("", "--host"), Error);
}

TEST(MpiHosts, AHostfileIsReadLineByLineWithItsErrorsPlaced) {
  test_util::TempDir dir;
  const std::string path = (dir.path() / "hosts").string();
  std::ofstream(path) << "# the lab's two boxes\nnode-a slots=8\n\nnode-b slots=8 max_slots=8\nnode-c\n";
  const auto hosts = LoadHostfile(path);
  ASSERT_EQ(hosts.size(), 3u);
  EXPECT_EQ(hosts[1].name, "node-b");
  EXPECT_EQ(hosts[1].slots, 8);
  EXPECT_EQ(hosts[2].slots, 1);

  std::ofstream(path) << "node-a slots=8\nnode-b slots=eight\n";
  try {
    LoadHostfile(path);
    FAIL() << "a bad slots value was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), path + ":2: slots: must be a number from 1 (got 'eight')");
  }
  std::ofstream(path) << "# nothing\n";
  EXPECT_THROW(LoadHostfile(path), Error);
  EXPECT_THROW(LoadHostfile((dir.path() / "missing").string()), Error);
}

TEST(MpiHosts, RanksFillTheFirstHostsSlotsFirst) {
  const std::vector<MpiHost> hosts = {{"a", 2}, {"b", 3}};
  EXPECT_EQ(RanksToHosts(hosts, 4), (std::vector<std::string>{"a", "a", "b", "b"}));
  EXPECT_EQ(RanksToHosts(hosts, 5).back(), "b");
}

TEST(MpiHosts, WithHostsMpirunGetsThemAndNoOversubscription) {
  MpiLaunch local;
  local.processes = 4;
  local.command = {"shardlab-cli", "run", "allreduce"};
  const auto one = MpirunArgv(local);
  EXPECT_NE(std::find(one.begin(), one.end(), "--oversubscribe"), one.end());

  MpiLaunch cluster = local;
  cluster.hosts = {{"a", 2}, {"b", 2}};
  const auto two = MpirunArgv(cluster);
  EXPECT_EQ(std::find(two.begin(), two.end(), "--oversubscribe"), two.end());
  const auto host = std::find(two.begin(), two.end(), "--host");
  ASSERT_NE(host, two.end());
  EXPECT_EQ(*(host + 1), "a:2,b:2");
  const auto map = std::find(two.begin(), two.end(), "--map-by");
  ASSERT_NE(map, two.end());
  EXPECT_EQ(*(map + 1), "slot");

  cluster.hostfile = "hosts";
  const auto file = MpirunArgv(cluster);
  EXPECT_NE(std::find(file.begin(), file.end(), "--hostfile"), file.end());
  EXPECT_EQ(std::find(file.begin(), file.end(), "--host"), file.end());
}

TEST(MpiHosts, OnlyAJobOnThisMachineUsesTheIsolatedLauncher) {
  // The isolated launcher cannot start anything on another host.
  for (const std::string& v : MpiJobEnvironmentDefaults(true)) {
    EXPECT_NE(v.rfind("OMPI_MCA_plm=", 0), 0u) << v;
  }
}

TEST(MpiHosts, ADeadRankIsNamedWithItsHostAndALostHostByItsName) {
  const std::string signal =
      "mpirun noticed that process rank 3 with PID 123 on node vm exited on signal 9 (Killed).";
  EXPECT_EQ(DescribeMpirunFailure(signal, {"a", "a", "b", "b"}),
            "rank 3 (host b) was killed by signal 9 (Killed) during the run; mpirun stopped the "
            "other ranks");
  EXPECT_EQ(DescribeMpirunFailure(signal),
            "rank 3 was killed by signal 9 (Killed) during the run; mpirun stopped the other ranks");
  const std::string lost =
      "ORTE has lost communication with a remote daemon.\n\n  HNP daemon   : [[1,0],0] on node "
      "10.231.0.1\n  Remote daemon: [[1,0],1] on node 10.231.0.2\n";
  const std::string said =
      "host 10.231.0.2 stopped answering during the run (its OpenMPI daemon or ranks were lost); "
      "mpirun stopped the other ranks";
  EXPECT_EQ(DescribeMpirunFailure(lost), said);
  const std::string peer =
      "An MPI communication peer process has unexpectedly disconnected.  This\n...\n  Local "
      "host: vm\n  Local PID:  30161\n  Peer host:  10.231.0.2\n";
  EXPECT_EQ(DescribeMpirunFailure(peer), said);
}

}  // namespace
}  // namespace shardlab
