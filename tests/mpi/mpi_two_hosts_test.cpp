// A job across two machines without a second machine: two network
// namespaces, each a "host" with its own address on the ends of one veth
// pair. `shardlab-cli mpirun --host A:2,B:2` runs inside the first; OpenMPI
// starts its daemon on the second through plm_rsh_agent, a small script
// that enters that namespace (`ip netns exec`) where ssh would log in.
//
//   namespace slNNNa  10.231.0.1 ──veth── 10.231.0.2  namespace slNNNb
//     mpirun, ranks 0-1                        orted, ranks 2-3
//
// Both "hosts" share this machine's files, so the same build runs on both,
// as a shared file system gives a cluster. Needs root (CI runs as root);
// elsewhere every test skips with the reason. The namespaces are removed
// after the suite, and the pair is named by the test's process id.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/run_program.h"

namespace fs = std::filesystem;
using shardlab::test_util::Describe;
using shardlab::test_util::ProgramResult;
using shardlab::test_util::RunProgram;
using shardlab::test_util::TempDir;

namespace {

const std::string kCli = SHARDLAB_CLI_PATH;
const std::string kAddrA = "10.231.0.1";
const std::string kAddrB = "10.231.0.2";

class TwoHosts : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string id = std::to_string(getpid());
    ns_a_ = "sl" + id + "a";
    ns_b_ = "sl" + id + "b";
    if (geteuid() != 0) {
      skip_reason_ = "network namespaces need root (CI runs as root)";
      return;
    }
    dir_ = new TempDir();
    const std::string va = "sl" + id + "x", vb = "sl" + id + "y";  // at most 15 characters
    const std::string script =
        "set -e\n"
        "ip netns add " + ns_a_ + "\n"
        "ip netns add " + ns_b_ + "\n"
        "ip link add " + va + " type veth peer name " + vb + "\n"
        "ip link set " + va + " netns " + ns_a_ + "\n"
        "ip link set " + vb + " netns " + ns_b_ + "\n"
        "ip -n " + ns_a_ + " addr add " + kAddrA + "/24 dev " + va + "\n"
        "ip -n " + ns_b_ + " addr add " + kAddrB + "/24 dev " + vb + "\n"
        "ip -n " + ns_a_ + " link set " + va + " up\n"
        "ip -n " + ns_b_ + " link set " + vb + " up\n"
        "ip -n " + ns_a_ + " link set lo up\n"
        "ip -n " + ns_b_ + " link set lo up\n";
    const ProgramResult made = RunProgram("/bin/sh", {"-c", script}, dir_->path());
    if (made.exit_code != 0) {
      skip_reason_ = "cannot make two network namespaces here (" + made.err.substr(0, 200) + ")";
      return;
    }
    made_ = true;
    // The agent OpenMPI runs instead of ssh: `agent HOST COMMAND...`.
    // SL_KILL_HOST=ADDR: 3 s after that host's daemon starts, every process
    // in its namespace is killed and the host is marked down: from then on
    // the agent cannot reach it, as ssh cannot reach a machine that died
    // (SL_DOWN_DIR holds the marks). SL_OTHER_BUILD=ADDR:
    // that host sees another program at the CLI's path (another build).
    agent_ = (dir_->path() / "netns-agent.sh").string();
    std::ofstream(agent_) << "#!/bin/sh\n"
                          << "host=$1; shift\n"
                          << "case $host in\n"
                          << "  " << kAddrA << ") ns=" << ns_a_ << ";;\n"
                          << "  " << kAddrB << ") ns=" << ns_b_ << ";;\n"
                          << "  *) echo \"netns-agent: unknown host $host\" >&2; exit 1;;\n"
                          << "esac\n"
                          << "if [ -n \"$SL_DOWN_DIR\" ] && [ -e \"$SL_DOWN_DIR/$host\" ]; then\n"
                          << "  echo \"ssh: connect to host $host port 22: No route to host\" >&2\n"
                          << "  exit 255\n"
                          << "fi\n"
                          << "if [ \"$SL_KILL_HOST\" = \"$host\" ]; then\n"
                          << "  (sleep 3; touch \"$SL_DOWN_DIR/$host\"; ip netns pids $ns | xargs -r kill -9) "
                             ">/dev/null 2>&1 </dev/null &\n"
                          << "fi\n"
                          << "if [ \"$SL_OTHER_BUILD\" = \"$host\" ]; then\n"
                          << "  exec ip netns exec $ns unshare -m sh -c \"mount --bind "
                          << (dir_->path() / "other-build.sh").string() << " " << kCli
                          << " && $*\"\n"
                          << "fi\n"
                          << "exec ip netns exec $ns sh -c \"$*\"\n";
    std::ofstream(dir_->path() / "other-build.sh") << "#!/bin/sh\necho shardlab-cli 0.0.9\n";
    chmod(agent_.c_str(), 0755);
    chmod((dir_->path() / "other-build.sh").c_str(), 0755);
  }

  static void TearDownTestSuite() {
    if (made_) {
      TempDir scratch;
      RunProgram("/bin/sh",
                 {"-c", "ip netns pids " + ns_a_ + " | xargs -r kill -9; ip netns pids " + ns_b_ +
                            " | xargs -r kill -9; ip netns del " + ns_a_ + "; ip netns del " +
                            ns_b_},
                 scratch.path());
    }
    delete dir_;
    dir_ = nullptr;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
  }

  // `shardlab-cli WORDS...` run in host A's namespace, OpenMPI told to reach
  // the hosts through the agent and to talk over the veth pair only (the two
  // namespaces share one hostname, so no shared-memory transport between them).
  ProgramResult OnHostA(const std::vector<std::string>& words,
                        const std::vector<std::string>& env = {}) {
    std::vector<std::string> args = {"OMPI_MCA_plm_rsh_agent=" + agent_,
                                     "OMPI_MCA_oob_tcp_if_include=10.231.0.0/24",
                                     "OMPI_MCA_btl_tcp_if_include=10.231.0.0/24",
                                     "OMPI_MCA_btl=tcp,self",
                                     "OMPI_MCA_orte_base_help_aggregate=0"};
    args.insert(args.end(), env.begin(), env.end());
    args.insert(args.end(), {"ip", "netns", "exec", ns_a_, kCli});
    args.insert(args.end(), words.begin(), words.end());
    return RunProgram("/usr/bin/env", args, scratch_.path());
  }

  static std::string Hosts(int a, int b) {
    return kAddrA + ":" + std::to_string(a) + "," + kAddrB + ":" + std::to_string(b);
  }

  static inline std::string ns_a_, ns_b_, agent_, skip_reason_;
  static inline bool made_ = false;
  static inline TempDir* dir_ = nullptr;
  TempDir scratch_;
};

TEST_F(TwoHosts, RingAllReduceAcrossTheHostsEqualsTheReference) {
  const ProgramResult r = OnHostA({"mpirun", "-np", "4", "--host", Hosts(2, 2), "--timeout",
                                   "120", "--", "run", "allreduce", "--backend", "mpi", "--size",
                                   "64K"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("ring all-reduce, 4 ranks"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result: correct (65536 values checked, max_abs_err 0)"), std::string::npos)
      << r.out;
}

TEST_F(TwoHosts, ZeroStepAcrossTheHostsEqualsTheSingleDeviceModel) {
  const ProgramResult r = OnHostA({"mpirun", "-np", "4", "--host", Hosts(2, 2), "--timeout",
                                   "120", "--", "run", "zero", "--stage", "3", "--ranks", "4",
                                   "--backend", "mpi"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("ZeRO-3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result: correct"), std::string::npos) << r.out;
}

TEST_F(TwoHosts, AHostfileWorksAsTheHostList) {
  const fs::path hostfile = scratch_.path() / "hosts";
  std::ofstream(hostfile) << "# two namespaces\n" << kAddrA << " slots=1\n" << kAddrB << " slots=1\n";
  const ProgramResult r = OnHostA({"mpirun", "-np", "2", "--hostfile", hostfile.string(),
                                   "--timeout", "120", "--", "run", "allreduce", "--backend",
                                   "mpi", "--size", "1K"});
  ASSERT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.out.find("Result: correct"), std::string::npos) << r.out;
}

TEST_F(TwoHosts, ATopologysBoxesMapToTheHostsInOrder) {
  const std::string two_boxes = std::string(SHARDLAB_TEST_DATA_DIR) + "/topology/two_boxes.toml";
  // One slot each: rank 0 on A (box 0), rank 1 on B (box 1).
  const ProgramResult ok = OnHostA({"mpirun", "-np", "2", "--host", Hosts(1, 1), "--timeout",
                                    "120", "--", "run", "allreduce", "--backend", "mpi",
                                    "--topology", two_boxes, "--size", "1K"});
  ASSERT_EQ(ok.exit_code, 0) << Describe(ok);
  EXPECT_NE(ok.out.find("two_boxes.toml, backend mpi"), std::string::npos) << ok.out;
  // Two slots on A would put rank 1, which is in box 1, on A: refused before anything runs.
  const ProgramResult bad = OnHostA({"mpirun", "-np", "2", "--host", Hosts(2, 2), "--", "run",
                                     "allreduce", "--backend", "mpi", "--topology", two_boxes});
  EXPECT_EQ(bad.exit_code, 2) << Describe(bad);
  EXPECT_NE(bad.err.find("puts rank 1 in box 1 (host " + kAddrB +
                         "), but the host list places it on " + kAddrA),
            std::string::npos)
      << bad.err;
}

TEST_F(TwoHosts, AHostThatDiesMidRunIsNamed) {
  // Rank 2 (on B) stops answering at its third op, so the run cannot end
  // before B dies; 3 s after B's daemon starts, every process on B is killed.
  const ProgramResult r = OnHostA(
      {"mpirun", "-np", "4", "--host", Hosts(2, 2), "--timeout", "120", "--", "run", "allreduce",
       "--backend", "mpi", "--size", "1K", "--inject-fault", "stall:rank=2,op=3", "--mpi-timeout",
       "100s"},
      {"SL_KILL_HOST=" + kAddrB, "SL_DOWN_DIR=" + scratch_.path().string()});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  std::printf("%s", r.err.c_str());  // the message a user sees, in the test's log
  EXPECT_NE(r.err.find("host " + kAddrB), std::string::npos) << Describe(r);
  EXPECT_EQ(r.err.find("host " + kAddrA), std::string::npos) << Describe(r);
}

TEST_F(TwoHosts, AHostThatIsDownFromTheStartIsNamed) {
  // OpenMPI says only "unable to reliably start one or more daemons"; the
  // launcher asks each host in turn and names the one that does not answer.
  std::ofstream(scratch_.path() / kAddrB) << "down\n";
  const ProgramResult r = OnHostA({"mpirun", "-np", "4", "--host", Hosts(2, 2), "--timeout",
                                   "120", "--", "run", "allreduce", "--backend", "mpi"},
                                  {"SL_DOWN_DIR=" + scratch_.path().string()});
  EXPECT_NE(r.exit_code, 0) << Describe(r);
  EXPECT_NE(r.err.find("host " + kAddrB + " cannot be reached"), std::string::npos)
      << Describe(r);
  EXPECT_EQ(r.err.find("host " + kAddrA), std::string::npos) << Describe(r);
  EXPECT_EQ(r.out.find("Result"), std::string::npos) << r.out;
}

TEST_F(TwoHosts, EveryHostMustRunTheSameShardLab) {
  const ProgramResult r = OnHostA({"mpirun", "-np", "4", "--host", Hosts(2, 2), "--timeout",
                                   "120", "--", "run", "allreduce", "--backend", "mpi"},
                                  {"SL_OTHER_BUILD=" + kAddrB});
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_NE(r.err.find("host " + kAddrB + " runs 'shardlab-cli 0.0.9' but this host runs "
                       "'shardlab-cli"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("Result"), std::string::npos) << "the job ran anyway:\n" << r.out;
}

TEST_F(TwoHosts, MoreProcessesThanSlotsIsRefused) {
  const ProgramResult r = OnHostA({"mpirun", "-np", "5", "--host", Hosts(2, 2), "--", "run",
                                   "allreduce", "--backend", "mpi"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_NE(r.err.find("-np 5 but the hosts have 4 slots"), std::string::npos) << r.err;
}

}  // namespace
