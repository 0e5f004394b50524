#include "report/report_reader.h"

#include "report/entry_points.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "report/report_analysis.h"
#include "report/report_html.h"
#include "report/report_json.h"
#include "report/report_text.h"

namespace mlreport {
namespace {

std::string Fixture(const std::string& name) { return std::string(MULTILANE_REPORT_FIXTURES) + "/" + name; }

std::string ParseError(const std::string& text) {
  JobReport r;
  std::string error;
  EXPECT_FALSE(ParseJobReport(text, "f.json", &r, &error)) << text;
  return error;
}

const char kSpread[] = "{\"min\": 1, \"mean\": 1, \"max\": 1}";

// A report's time field, each of its spreads `spread`.
std::string TimeField(const std::string& spread = kSpread) {
  return "\"time\": {\"wall_s\": " + spread + ", \"allreduce_s\": " + spread + ", \"wait_s\": " + spread + "}";
}

// A report up to its bins' opening bracket: format, version, {job} and time.
std::string Head(const std::string& job = "\"name\": \"x\", \"ranks\": 2") {
  return "{\"format\": \"multilane-job-report\", \"version\": 1, \"job\": {" + job + "}, " + TimeField() +
         ", \"bins\": [";
}

TEST(JobReportFile, ReadsTheKnownJob) {
  JobReport r;
  std::string error;
  ASSERT_TRUE(ReadJobReport(Fixture("known_job.json"), &r, &error)) << error;
  EXPECT_EQ(r.job_name, "train_model");
  EXPECT_EQ(r.job_id, "4242");
  EXPECT_EQ(r.ranks, 8);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.gpus, 8);
  EXPECT_EQ(r.hosts.size(), 2u);
  EXPECT_TRUE(r.profile_text.has_value());
  EXPECT_DOUBLE_EQ(r.wall_s.mean, 100.0);
  EXPECT_DOUBLE_EQ(r.allreduce_s.max, 42.0);
  EXPECT_DOUBLE_EQ(r.wait_s.mean, 10.0);
  EXPECT_EQ(r.wait_sampled_calls, 46);
  ASSERT_EQ(r.bins.size(), 2u);
  EXPECT_EQ(r.bins[1].memory, "host");
  EXPECT_EQ(r.bins[1].from, 4194304u);
  EXPECT_EQ(*r.bins[1].to, 8388608u);
  EXPECT_EQ(r.bins[1].calls, 2000);
  EXPECT_EQ(r.bins[1].algos.at("lane"), 2000);
  ASSERT_TRUE(r.bins[1].profile.has_value());
  EXPECT_DOUBLE_EQ(*r.bins[1].profile->mpi_time_us, 20000.0);
  ASSERT_EQ(r.gpus_sampled.size(), 2u);
  EXPECT_DOUBLE_EQ(*r.gpus_sampled[1].energy_j, 32000.0);
  EXPECT_DOUBLE_EQ(*r.gpus_sampled[0].utilization_mean_pct, 70.0);
}

TEST(JobReportFile, NullProfileAndNoGpus) {
  JobReport r;
  std::string error;
  ASSERT_TRUE(ReadJobReport(Fixture("cpu_no_profile.json"), &r, &error)) << error;
  EXPECT_FALSE(r.profile_text.has_value());
  EXPECT_TRUE(r.gpus_sampled.empty());
  EXPECT_FALSE(r.bins[0].profile.has_value());
}

TEST(JobReportFile, TruncatedFileSaysSo) {
  JobReport r;
  std::string error;
  const std::string path = Fixture("truncated.json");
  ASSERT_FALSE(ReadJobReport(path, &r, &error));
  EXPECT_EQ(error.rfind(path + ": not a complete JSON file (truncated?)", 0), 0u) << error;
  EXPECT_NE(ParseError("{\"format\": \"multilane-job-report\", \"vers").find("not a complete JSON file (truncated?)"),
            std::string::npos);
  EXPECT_NE(ParseError("  \n").find("not a complete JSON file (truncated?): the file is empty"), std::string::npos);
}

// Issue 15 item 4: a number too large for a double threw out_of_range out of
// the reader (core dump, exit 134).
TEST(JobReportFile, HugeNumbersAreAnErrorNamingTheFile) {
  const std::string digits(400, '7');
  for (const std::string& number : {std::string("1e999"), std::string("-1e999"), digits}) {
    const std::string text =
        "{\"format\": \"multilane-job-report\", \"version\": 1, \"job\": {\"ranks\": " + number + "}}";
    const std::string error = ParseError(text);
    EXPECT_EQ(error.rfind("f.json: ", 0), 0u) << error;
    EXPECT_NE(error.find("number overflow"), std::string::npos) << error;
  }
  EXPECT_EQ(ParseError("{\"format\": \"multilane-job-report\", \"version\": " + digits + "}").rfind("f.json: ", 0), 0u);
}

TEST(JobReportFile, ForeignJsonNamesItsFormat) {
  JobReport r;
  std::string error;
  const std::string path = Fixture("foreign.json");
  ASSERT_FALSE(ReadJobReport(path, &r, &error));
  EXPECT_EQ(error, path + ": not a multilane job report (format is 'speedscope', expected 'multilane-job-report')");
  ASSERT_FALSE(ReadJobReport(Fixture("no_format.json"), &r, &error));
  EXPECT_NE(error.find("not a multilane job report (no 'format' field"), std::string::npos) << error;
  EXPECT_NE(ParseError("[1, 2]").find("not a multilane job report (the file holds a JSON array"), std::string::npos);
}

TEST(JobReportFile, NewerVersionIsNamed) {
  JobReport r;
  std::string error;
  const std::string path = Fixture("version2.json");
  ASSERT_FALSE(ReadJobReport(path, &r, &error));
  EXPECT_EQ(error,
            path + ": job report version 2 is newer than this multilane reads (version 1): use a newer multilane");
  EXPECT_NE(ParseError("{\"format\": \"multilane-job-report\", \"version\": \"1\"}").find("integer 'version'"),
            std::string::npos);
  EXPECT_NE(ParseError("{\"format\": \"multilane-job-report\", \"version\": 0}").find("version 0 is not supported"),
            std::string::npos);
}

TEST(JobReportFile, NotJsonAtAll) {
  EXPECT_NE(ParseError("multilane-profile 1\nhost 0 inf lane\n").find("f.json: not a JSON file (syntax error at byte"),
            std::string::npos);
}

TEST(JobReportFile, MissingOrIllTypedFieldIsNamed) {
  const std::string head = "{\"format\": \"multilane-job-report\", \"version\": 1, ";
  const std::string job = "\"job\": {\"name\": \"x\", \"ranks\": 2}, ";
  const std::string time = TimeField();
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(head + job + time + ", \"bins\": []}", "f.json", &r, &error)) << error;
  EXPECT_EQ(ParseError(head + job + time + "}"), "f.json: bad job report: field 'bins' is missing");
  EXPECT_EQ(ParseError(head + "\"job\": {\"name\": \"x\"}, " + time + ", \"bins\": []}"),
            "f.json: bad job report: field 'job.ranks' is missing");
  EXPECT_EQ(ParseError(head + job + "\"time\": {\"wall_s\": {\"min\": 1, \"mean\": \"2\", \"max\": 3}}, \"bins\": []}"),
            "f.json: bad job report: field 'time.wall_s.mean' must be a number, not string");
  EXPECT_EQ(ParseError(head + job + time + ", \"bins\": [{\"memory\": \"host\"}]}"),
            "f.json: bad job report: field 'bins[0].from' is missing");
  EXPECT_EQ(ParseError(head + job + time + ", \"bins\": [], \"gpus\": {}}"),
            "f.json: bad job report: field 'gpus' must be an array, not object");
}

TEST(JobReportFile, UnknownFieldsAreIgnored) {
  JobReport r;
  std::string error;
  ASSERT_TRUE(
      ParseJobReport("{\"format\": \"multilane-job-report\", \"version\": 1, \"new_field\": [1], "
                     "\"job\": {\"name\": \"x\", \"ranks\": 2, \"color\": \"red\"}, " +
                         TimeField("{\"min\": 1, \"mean\": 1, \"max\": 1, \"p50\": 1}") + ", \"bins\": []}",
                     "f.json", &r, &error))
      << error;
  EXPECT_EQ(r.ranks, 2);
}

TEST(JobReportFile, ReadsDeviceTransportsAndOlderFilesWithout) {
  const std::string head = Head();
  const std::string bin =
      "{\"memory\": \"device\", \"from\": 4096, \"calls\": 30, \"bytes\": 122880, \"time_s\": " + std::string(kSpread) +
      ", \"wait_s\": 0, \"algos\": {\"lane\": 30}";
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(head + bin + ", \"transports\": {\"mpi\": 25, \"staged\": 5}, \"nccl_fallbacks\": 25}]}",
                             "f.json", &r, &error))
      << error;
  ASSERT_EQ(r.bins.size(), 1u);
  EXPECT_EQ(r.bins[0].transports.at("mpi"), 25);
  EXPECT_EQ(r.bins[0].transports.at("staged"), 5);
  EXPECT_EQ(r.bins[0].nccl_fallbacks, 25);
  // A report written before the counters existed reads as before.
  ASSERT_TRUE(ParseJobReport(head + bin + "}]}", "f.json", &r, &error)) << error;
  EXPECT_TRUE(r.bins[0].transports.empty());
  EXPECT_EQ(r.bins[0].nccl_fallbacks, 0);
  EXPECT_EQ(ParseError(head + bin + ", \"transports\": [1]}]}"),
            "f.json: bad job report: field 'bins[0].transports' must be an object");
  EXPECT_EQ(ParseError(head + bin + ", \"transports\": {\"nccl\": \"x\"}}]}"),
            "f.json: bad job report: field 'bins[0].transports.nccl' must be an integer, not string");
}

TEST(JobReportFile, ReadsEntryPointsAndSaysWhatWasNotServed) {
  const std::string head = Head() + "]";
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(head + ", \"entries\": {\"f08\": {\"calls\": 18, \"not_served\": 0}, "
                                    "\"nonblocking\": {\"calls\": 1, \"not_served\": 1}, "
                                    "\"c\": {\"calls\": 0, \"not_served\": 0}}}",
                             "f.json", &r, &error))
      << error;
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(EntryPointsUsed(r), "Fortran use mpi_f08 (Open MPI) 18 calls, MPI_Iallreduce 1 call");
  EXPECT_EQ(EntryPointsNotServed(r), "1 call through MPI_Iallreduce (nonblocking: passed to the system MPI)");
  // Older files have none; the report then says nothing about entry points.
  ASSERT_TRUE(ParseJobReport(head + "}", "f.json", &r, &error)) << error;
  EXPECT_TRUE(r.entries.empty());
  EXPECT_EQ(EntryPointsUsed(r), "");
  EXPECT_EQ(ParseError(head + ", \"entries\": {\"c\": {\"calls\": 1, \"not_served\": 2}}}"),
            "f.json: bad job report: field 'entries.c.not_served' is larger than its calls");
  EXPECT_EQ(ParseError(head + ", \"entries\": []}"),
            "f.json: bad job report: field 'entries' must be an object, not array");
}

TEST(JobReportFile, ReadsUnsupportedReasonsAndSystemAlgorithmsAndOlderFilesWithout) {
  const std::string head = Head();
  const std::string bin =
      "{\"memory\": \"host\", \"from\": 4096, \"calls\": 30, \"bytes\": 122880, \"time_s\": " + std::string(kSpread) +
      ", \"wait_s\": 0, \"algos\": {\"passthrough\": 30}";
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(head + bin +
                                 ", \"system_algos\": {\"ring\": 20}}], \"unsupported\": {\"one_rank\": 594, "
                                 "\"layout\": 0}}",
                             "f.json", &r, &error))
      << error;
  EXPECT_EQ(r.bins[0].system_algos.at("ring"), 20);
  EXPECT_EQ(r.unsupported.at("one_rank"), 594);
  EXPECT_EQ(UnsupportedCalls(r), "594 calls a multilane algorithm was chosen for went to the system MPI: one rank 594");
  // A report written before these counters reads as before and says nothing.
  ASSERT_TRUE(ParseJobReport(head + bin + "}]}", "f.json", &r, &error)) << error;
  EXPECT_TRUE(r.bins[0].system_algos.empty());
  EXPECT_TRUE(r.unsupported.empty());
  EXPECT_EQ(UnsupportedCalls(r), "");
  EXPECT_EQ(ParseError(head + bin + "}], \"unsupported\": {\"op\": \"x\"}}"),
            "f.json: bad job report: field 'unsupported.op' must be an integer, not string");
}

TEST(JobReportFile, MissingFileIsAnError) {
  JobReport r;
  std::string error;
  ASSERT_FALSE(ReadJobReport("/nonexistent/report.json", &r, &error));
  EXPECT_EQ(error.rfind("/nonexistent/report.json: cannot read: ", 0), 0u) << error;
  ASSERT_FALSE(ReadJobReport(MULTILANE_REPORT_FIXTURES, &r, &error));
  EXPECT_NE(error.find(": cannot read: it is a folder"), std::string::npos) << error;
}

// N14: what the reader refused only partly before.
class JobReportStrictness : public ::testing::Test {
 protected:
  std::string Bin(const std::string& fields) const {
    return "{" + fields + ", \"bytes\": 1, \"time_s\": " + kSpread + ", \"wait_s\": 0}";
  }
  std::string Good() const { return Bin("\"memory\": \"host\", \"from\": 4096, \"to\": 8192, \"calls\": 3"); }
};

TEST_F(JobReportStrictness, TheBaseIsAccepted) {
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(Head() + Good() + "]}", "f.json", &r, &error)) << error;
}

TEST_F(JobReportStrictness, TrailingGarbageIsRefused) {
  const std::string error = ParseError(Head() + Good() + "]} {\"x\": 1}");
  EXPECT_NE(error.find("f.json: not a JSON file (text after the end of the JSON document, at byte"), std::string::npos)
      << error;
}

TEST_F(JobReportStrictness, DuplicateKeysAreRefusedAtAnyDepth) {
  EXPECT_EQ(ParseError(Head("\"name\": \"x\", \"ranks\": 2, \"ranks\": 64") + Good() + "]}"),
            "f.json: bad job report: key 'ranks' appears twice in one object: give the file the library wrote");
  EXPECT_NE(ParseError(Head() + Bin("\"memory\": \"host\", \"from\": 1, \"calls\": 3, \"calls\": 9") + "]}")
                .find("key 'calls' appears twice"),
            std::string::npos);
  // The same key in two different objects is fine.
  JobReport r;
  std::string error;
  EXPECT_TRUE(ParseJobReport(Head() + Good() + "," + Bin("\"memory\": \"device\", \"from\": 1, \"calls\": 3") + "]}",
                             "f.json", &r, &error))
      << error;
}

TEST_F(JobReportStrictness, CountsBeyondInt64AndRanksBeyondIntAreRefused) {
  // 2^64 - 1 read as int64 is -1: a negative count.
  EXPECT_EQ(ParseError(Head() + Bin("\"memory\": \"host\", \"from\": 1, \"calls\": 18446744073709551615") + "]}"),
            "f.json: bad job report: field 'bins[0].calls' must be at most 9223372036854775807");
  // 2^32 + 2 ranks kept as an int would be 2.
  EXPECT_EQ(ParseError(Head("\"name\": \"x\", \"ranks\": 4294967298") + "]}"),
            "f.json: bad job report: field 'job.ranks' must be at most 2147483647");
  EXPECT_EQ(ParseError(Head("\"name\": \"x\", \"ranks\": 2, \"nodes\": 0") + "]}"),
            "f.json: bad job report: field 'job.nodes' must be at least 1");
  EXPECT_EQ(ParseError(Head() + Bin("\"memory\": \"host\", \"from\": 1, \"calls\": -3") + "]}"),
            "f.json: bad job report: field 'bins[0].calls' must be >= 0");
}

TEST_F(JobReportStrictness, BinsHaveAKnownMemoryAndAnUpperEdgeAboveTheLower) {
  EXPECT_EQ(ParseError(Head() + Bin("\"memory\": \"disk\", \"from\": 1, \"calls\": 3") + "]}"),
            "f.json: bad job report: field 'bins[0].memory' must be \"host\" or \"device\", not \"disk\"");
  EXPECT_EQ(ParseError(Head() + Bin("\"memory\": \"host\", \"from\": 8, \"to\": 8, \"calls\": 3") + "]}"),
            "f.json: bad job report: field 'bins[0].to' must be larger than 'from' (or absent: no upper bound)");
}

TEST_F(JobReportStrictness, EchoedValuesAreExcerpts) {
  const std::string huge(100 * 1024, 'f');
  const std::string error = ParseError("{\"format\": \"" + huge + "\", \"version\": 1}");
  EXPECT_LT(error.size(), 400u) << error.size();
  EXPECT_NE(error.find("\u2026 (102400 bytes)"), std::string::npos) << error.substr(0, 300);
}

TEST(JobReportFile, FifosAndDevicesAreRefusedWithoutBlocking) {
  JobReport r;
  std::string error;
  ASSERT_FALSE(ReadJobReport("/dev/zero", &r, &error));
  EXPECT_EQ(error, "/dev/zero: cannot read: it is a character device, not a regular file: give a regular file");
}

// Issue 41 item 10: `multilane report` stopped its summary line at a NUL in
// a host name, and its page kept raw NUL and ESC bytes.  The reader writes
// the control bytes of the file's text out, so every renderer shows them
// escaped and whole.
bool HasControlByte(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) return true;  // C1
  }
  return false;
}

TEST(JobReportFile, ControlBytesInTheFilesTextAreShownEscapedByEveryRenderer) {
  std::ifstream in(Fixture("known_job.json"));
  std::stringstream whole;
  whole << in.rdbuf();
  std::string text = whole.str();
  const auto swap = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  swap("\"node01\"", "\"node\\u0000one\"");
  swap("\"node02\"", "\"node\\u001b[31mtwo\\u009b\"");
  swap("\"train_model\"", "\"train\\u0007model\"");
  JobReport r;
  std::string error;
  ASSERT_TRUE(ParseJobReport(text, "hostile.json", &r, &error)) << error;
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.hosts[0], "node\\x00one");
  EXPECT_EQ(r.hosts[1], "node\\x1b[31mtwo\\u009b");
  EXPECT_EQ(r.job_name, "train\\x07model");
  const ReportSet set = AnalyzeReports({r});
  const std::string summary = FormatReportText(set);
  EXPECT_NE(summary.find("  hosts: node\\x00one, node\\x1b[31mtwo\\u009b\n"), std::string::npos) << summary;
  EXPECT_FALSE(HasControlByte(summary)) << summary;
  const std::string page = RenderReportHtml(set);
  EXPECT_NE(page.find("node\\x00one, node\\x1b[31mtwo\\u009b"), std::string::npos);
  EXPECT_FALSE(HasControlByte(page));
  const std::string json = AnalysisJson(set).dump();
  EXPECT_NE(json.find("\"node\\\\x00one\""), std::string::npos) << json.substr(0, 400);
  EXPECT_FALSE(HasControlByte(json));
}

}  // namespace
}  // namespace mlreport
