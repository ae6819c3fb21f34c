// The documentation stays true: every console example in README.md and docs/
// runs against the built binaries and prints what the page shows under it
// (the rules are in doc_examples.h and docs/testing.md), every shell block
// that does not run says why, and every link between the pages resolves.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "../common/run_program.h"
#include "doc_examples.h"

namespace fs = std::filesystem;
using shardlab::docs::DocBlock;
using shardlab::docs::FindLinks;
using shardlab::docs::FirstMismatch;
using shardlab::docs::HeadingAnchors;
using shardlab::docs::OutputMatches;
using shardlab::docs::ParseDocBlocks;
using shardlab::docs::SplitLines;
using shardlab::test_util::ReadWholeFile;
using shardlab::test_util::RunProgram;
using shardlab::test_util::TempDir;

namespace {

const fs::path kSource = SHARDLAB_SOURCE_DIR;
const fs::path kBinary = SHARDLAB_BINARY_DIR;

// README.md and every page under docs/, relative to the source tree.
std::vector<std::string> DocFiles() {
  std::vector<std::string> files = {"README.md"};
  if (fs::is_directory(kSource / "docs")) {
    for (const auto& e : fs::recursive_directory_iterator(kSource / "docs")) {
      if (e.is_regular_file() && e.path().extension() == ".md") {
        files.push_back(fs::relative(e.path(), kSource).generic_string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string TestName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0) c = '_';
  }
  return name;
}

std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A scratch folder that looks like the source tree (labs/, tests/data/,
// assets/ and build/ reachable by the paths the pages use), so examples
// that write files write them here.
void MirrorTree(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(kSource)) {
    const std::string name = e.path().filename().string();
    if (name == ".git" || name.rfind("build", 0) == 0) continue;
    fs::create_symlink(e.path(), dir / name);
  }
  fs::create_symlink(kBinary, dir / "build");
}

// One command as a terminal shows it: stderr into stdout, the built
// shardlab-cli (and the app, the bench programs) on PATH.
shardlab::test_util::ProgramResult RunExample(const std::string& command, const fs::path& cwd,
                                              const fs::path& capture) {
  const std::string path = (kBinary / "app/cli").string() + ":" +
                           (kBinary / "app/gui").string() + ":" + (kBinary / "bench").string();
  const std::string script = "export PATH=" + Quoted(path) + ":\"$PATH\"; cd " +
                             Quoted(cwd.string()) + " || exit 99; exec 2>&1\n" + command + "\n";
  return RunProgram("/bin/sh", {"-c", script}, capture);
}


class DocPage : public ::testing::TestWithParam<std::string> {};

TEST_P(DocPage, EveryConsoleExamplePrintsWhatThePageShows) {
  const std::string file = GetParam();
  const std::vector<DocBlock> blocks = ParseDocBlocks(ReadWholeFile(kSource / file), file);
  int ran = 0;
  for (const DocBlock& block : blocks) {
    if (!block.IsShell()) continue;
    const std::string where = file + ":" + std::to_string(block.line);
    if (!block.skip_reason.empty()) continue;
    if (block.info != "console") {
      ADD_FAILURE() << where << ": a ```" << block.info
                    << " block is never run: make it a ```console block with `$ ` commands and "
                       "their output, or put <!-- doc-test: skip REASON --> before it";
      continue;
    }
    EXPECT_FALSE(block.commands.empty())
        << where << ": a ```console block without a `$ ` command checks nothing";
    TempDir cwd;
    TempDir capture;
    MirrorTree(cwd.path());
    for (const auto& c : block.commands) {
      const auto started = std::chrono::steady_clock::now();
      const auto result = RunExample(c.command, cwd.path(), capture.path());
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::printf("  %5.2f s  %s:%d\n", seconds, file.c_str(), c.line);
      ++ran;
      const std::vector<std::string> actual = SplitLines(result.out);
      const std::string at = file + ":" + std::to_string(c.line);
      EXPECT_EQ(result.exit_code, c.expected_exit)
          << at << ": `" << c.command << "` exited " << result.exit_code
          << " (write `# exit N` after a command that should fail)\n" << result.out;
      if (!OutputMatches(c.expected, actual)) {
        const int bad = FirstMismatch(c.expected, actual);
        std::string shown;
        for (const std::string& l : c.expected) shown += "  | " + l + "\n";
        std::string got;
        for (const std::string& l : actual) got += "  | " + l + "\n";
        ADD_FAILURE() << at << ": `" << c.command << "` printed something else than the page"
                      << " shows; the first line that does not match is line " << (bad + 1)
                      << " of the output shown (" << file << ":" << (c.line + 1 + bad)
                      << ")\n--- page\n" << shown << "--- real output\n" << got;
      }
    }
  }
  RecordProperty("commands_run", ran);
  std::printf("%s: %d commands run\n", file.c_str(), ran);
}

TEST_P(DocPage, EveryLinkToAnotherPageOrAHeadingResolves) {
  const std::string file = GetParam();
  const fs::path here = (kSource / file).parent_path();
  for (const auto& link : FindLinks(ReadWholeFile(kSource / file))) {
    const std::string& t = link.target;
    if (t.rfind("http://", 0) == 0 || t.rfind("https://", 0) == 0 || t.rfind("mailto:", 0) == 0) {
      continue;
    }
    const std::string at = file + ":" + std::to_string(link.line) + ": link " + t;
    const size_t hash = t.find('#');
    const std::string path_part = t.substr(0, hash);
    const fs::path target = path_part.empty() ? kSource / file : here / path_part;
    if (!fs::exists(target)) {
      ADD_FAILURE() << at << ": " << fs::relative(target.lexically_normal(), kSource).string()
                    << " does not exist";
      continue;
    }
    if (hash == std::string::npos) continue;
    const std::string anchor = t.substr(hash + 1);
    ASSERT_EQ(target.extension(), ".md") << at << ": an anchor into a file that is not Markdown";
    const auto anchors = HeadingAnchors(ReadWholeFile(target));
    EXPECT_NE(std::find(anchors.begin(), anchors.end(), anchor), anchors.end())
        << at << ": no heading makes the anchor #" << anchor;
  }
}

INSTANTIATE_TEST_SUITE_P(Docs, DocPage, ::testing::ValuesIn(DocFiles()), TestName);

TEST(DocPages, TheManualHasTheIssuesPagesAndReadmeStaysShort) {
  for (const char* page : {"docs/README.md", "docs/app.md", "docs/cli.md", "docs/hardware.md",
                           "docs/testing.md", "docs/faq.md"}) {
    EXPECT_TRUE(fs::exists(kSource / page)) << page;
  }
  EXPECT_LE(SplitLines(ReadWholeFile(kSource / "README.md")).size(), 220u)
      << "README.md is the front door: the manual is docs/";
}

// Every flag a program's --help prints, mentioned on its manual page.
std::vector<std::string> HelpFlags(const fs::path& program, const std::vector<std::string>& words) {
  TempDir dir;
  std::vector<std::string> args = words;
  args.push_back("--help");
  const auto result = RunProgram(program.string(), args, dir.path());
  EXPECT_EQ(result.exit_code, 0) << program << " " << words.size();
  std::vector<std::string> flags;
  static const std::regex kFlag(R"((^|[\s,])(--[a-z][a-z0-9-]*))");
  for (const std::string& line : SplitLines(result.out)) {
    // Only the flag lists: lines that start with a flag (after -x, ).
    const std::string t = line.substr(line.find_first_not_of(' ') == std::string::npos
                                          ? line.size()
                                          : line.find_first_not_of(' '));
    if (t.rfind("--", 0) != 0 && !(t.size() > 4 && t[0] == '-' && t[2] == ',')) continue;
    std::smatch m;
    if (std::regex_search(t, m, kFlag)) flags.push_back(m[2].str());
  }
  EXPECT_FALSE(flags.empty()) << program << ": no flags found in its --help";
  return flags;
}

bool Mentions(const std::string& page, const std::string& flag) {
  for (size_t at = page.find(flag); at != std::string::npos; at = page.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    const bool word_end = end == page.size() || !(std::isalnum(static_cast<unsigned char>(page[end])) != 0 || page[end] == '-');
    if (word_end) return true;
  }
  return false;
}

TEST(DocPages, EveryFlagOfEveryCommandIsInTheManual) {
  const std::string cli_page = ReadWholeFile(kSource / "docs/cli.md");
  const std::vector<std::vector<std::string>> commands = {
      {},           {"run"},        {"run", "pipeline"}, {"run", "tp-mlp"}, {"run", "zero"},
      {"run", "3d"}, {"run", "moe"}, {"run", "dp-train"}, {"run", "inference"}, {"run", "elastic"}, {"sweep"}, {"sweep", "tp-mlp"}, {"topo"},
      {"memory"},   {"plan"},       {"lab"},             {"demo"},          {"mpirun"},
      {"worker"},   {"calibrate"}, {"inspect"}};
  for (const auto& words : commands) {
    for (const std::string& flag : HelpFlags(SHARDLAB_CLI_PATH, words)) {
      EXPECT_TRUE(Mentions(cli_page, flag))
          << "docs/cli.md does not mention " << flag << " of 'shardlab-cli"
          << (words.empty() ? "" : " " + words[0]) << (words.size() > 1 ? " " + words[1] : "")
          << "'";
    }
  }
  const fs::path app = kBinary / "app/gui/shardlab";
  if (!fs::exists(app)) GTEST_SKIP() << "the app was not built: its flags are not checked";
  const std::string app_page = ReadWholeFile(kSource / "docs/app.md");
  for (const std::string& flag : HelpFlags(app, {})) {
    EXPECT_TRUE(Mentions(app_page, flag)) << "docs/app.md does not mention shardlab's " << flag;
  }
}

// The rules themselves, on examples written here: each can fail.
TEST(DocExampleRules, AChangedNumberFails) {
  const std::vector<std::string> shown = {"    1024   256   float   sum   -1   4.21   0.24   0.37   0"};
  EXPECT_TRUE(OutputMatches(shown, {"    1024   256   float   sum   -1   4.21   0.24   0.37   0"}));
  EXPECT_FALSE(OutputMatches(shown, {"    1024   256   float   sum   -1   4.22   0.24   0.37   0"}));
  EXPECT_FALSE(OutputMatches(shown, {"    1024   256   float   sum   -1   4.21   0.24   0.37   1"}));
  EXPECT_EQ(FirstMismatch(shown, {"other"}), 0);
}

TEST(DocExampleRules, ElisionsAndMachineNumbers) {
  const std::vector<std::string> shown = {"# ShardLab: ring ...", "...", "time ~1705 us", "done"};
  EXPECT_TRUE(OutputMatches(shown, {"# ShardLab: ring all-reduce", "time 3.5 us", "done"}));
  EXPECT_TRUE(OutputMatches(shown, {"# ShardLab: ring x", "a", "b", "time 12e3 us", "done"}));
  EXPECT_TRUE(OutputMatches(shown, {"# ShardLab: ring", "time 3 us", "done"}));
  EXPECT_FALSE(OutputMatches(shown, {"# ShardLab: tree", "time 3 us", "done"}));
  EXPECT_FALSE(OutputMatches(shown, {"# ShardLab: ring", "time fast us", "done"}));
  EXPECT_FALSE(OutputMatches(shown, {"# ShardLab: ring", "time 3 us", "done", "extra"}));
  EXPECT_FALSE(OutputMatches(shown, {"# ShardLab: ringer", "time 3 us", "done"}));
  EXPECT_EQ(FirstMismatch(shown, {"# ShardLab: ring", "time 3 us", "dine"}), 3);
  // Four dots or more are text, not an elision.
  EXPECT_TRUE(OutputMatches({"|F0 ....B0"}, {"|F0 ....B0"}));
  EXPECT_FALSE(OutputMatches({"|F0 ....B0"}, {"|F0 ...xB0"}));
  // Trailing spaces and trailing blank lines do not count; column widths do not either.
  EXPECT_TRUE(OutputMatches({"a  b"}, {"a b   ", "", ""}));
}

TEST(DocExampleRules, BlocksCommandsExitCodesAndSkipMarkers) {
  const std::string page =
      "text\n"
      "```console\n"
      "$ shardlab-cli run allreduce \\\n"
      "      --ranks 4\n"
      "out 1\n"
      "$ shardlab-cli run allreduce --ranks 0  # exit 2\n"
      "err\n"
      "```\n"
      "<!-- doc-test: skip gpu: needs a CUDA device -->\n"
      "```sh\n"
      "shardlab-cli run allreduce --backend cuda\n"
      "```\n";
  const auto blocks = ParseDocBlocks(page, "page.md");
  ASSERT_EQ(blocks.size(), 2u);
  ASSERT_EQ(blocks[0].commands.size(), 2u);
  EXPECT_EQ(blocks[0].commands[0].line, 3);
  EXPECT_EQ(blocks[0].commands[0].command, "shardlab-cli run allreduce \\\n      --ranks 4");
  EXPECT_EQ(blocks[0].commands[0].expected, std::vector<std::string>{"out 1"});
  EXPECT_EQ(blocks[0].commands[0].expected_exit, 0);
  EXPECT_EQ(blocks[0].commands[1].expected_exit, 2);
  EXPECT_EQ(blocks[1].skip_reason, "gpu: needs a CUDA device");
  EXPECT_THROW(ParseDocBlocks("<!-- doc-test: skip lazy -->\n```sh\nx\n```\n", "p.md"),
               std::runtime_error);
  EXPECT_THROW(ParseDocBlocks("```console\n$ x\n", "p.md"), std::runtime_error);
}

TEST(DocLinkRules, LinksOutsideCodeAndGithubAnchors) {
  const std::string page =
      "# ShardLab\n"
      "See [the CLI](docs/cli.md#run-one-collective) and ![ring](docs/images/ring.png).\n"
      "`[not](a-link.md)`\n"
      "```\n[not](either.md)\n```\n"
      "## `run`: one collective\n"
      "## Run\n## Run\n";
  const auto links = FindLinks(page);
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].target, "docs/cli.md#run-one-collective");
  EXPECT_EQ(links[1].target, "docs/images/ring.png");
  EXPECT_EQ(links[1].line, 2);
  EXPECT_EQ(HeadingAnchors(page),
            (std::vector<std::string>{"shardlab", "run-one-collective", "run", "run-1"}));
}

}  // namespace
