// user_options_test.cc: the --multilane grammar.
#include "vocab/user_options.h"

#include <gtest/gtest.h>

namespace mla {
namespace {

UserOptions Parse(const char* v) {
  UserOptions o;
  std::string error;
  EXPECT_TRUE(ParseUserOptions(v, &o, &error)) << v << ": " << error;
  return o;
}

std::string ParseError(const char* v) {
  UserOptions o;
  std::string error;
  EXPECT_FALSE(ParseUserOptions(v, &o, &error)) << v;
  return error;
}

TEST(UserOptions, BareOptionMeansAuto) {
  for (const char* v : {static_cast<const char*>(nullptr), "", "auto", "(null)"}) {
    const UserOptions o = Parse(v);
    EXPECT_TRUE(o.given);
    EXPECT_TRUE(o.enabled);
    EXPECT_EQ(o.ranks_per_gpu, 0);
    EXPECT_FALSE(o.verbose);
    EXPECT_FALSE(o.report);
  }
}

TEST(UserOptions, ItemsCombine) {
  const UserOptions o = Parse("ranks-per-gpu:4,verbose,report:/scratch/me");
  EXPECT_TRUE(o.enabled);
  EXPECT_EQ(o.ranks_per_gpu, 4);
  EXPECT_TRUE(o.verbose);
  EXPECT_TRUE(o.report);
  EXPECT_EQ(o.report_dir, "/scratch/me");
  EXPECT_EQ(Parse("report").report_dir, "");
  EXPECT_TRUE(Parse("help").help);
}

TEST(UserOptions, MpiFamily) {
  EXPECT_EQ(Parse("auto").mpi, "");
  EXPECT_EQ(Parse("mpi:mpich").mpi, "mpich");
  EXPECT_EQ(Parse("mpi:mpich,mpi:openmpi").mpi, "openmpi");
}

TEST(UserOptions, OffAndLaterItemsWin) {
  EXPECT_FALSE(Parse("off").enabled);
  EXPECT_TRUE(Parse("off,auto").enabled);
  EXPECT_FALSE(Parse("verbose,off").enabled);
}

TEST(UserOptions, ErrorsNameTheItemAndTheForms) {
  EXPECT_NE(ParseError("fast").find("unknown item 'fast'"), std::string::npos);
  EXPECT_NE(ParseError("fast").find("ranks-per-gpu:N"), std::string::npos);
  EXPECT_NE(ParseError("ranks-per-gpu:0").find("1 to 64"), std::string::npos);
  EXPECT_NE(ParseError("ranks-per-gpu:65").find("'ranks-per-gpu:65'"), std::string::npos);
  EXPECT_NE(ParseError("ranks-per-gpu:x").find("not valid"), std::string::npos);
  EXPECT_NE(ParseError("ranks-per-gpu:+4").find("not valid"), std::string::npos);
  EXPECT_NE(ParseError("mpi:intel").find("'mpi:intel' is not valid: write mpi:FAMILY with FAMILY openmpi or mpich"),
            std::string::npos);
  ParseError("mpi");
  ParseError("ranks-per-gpu");
  ParseError("report:");
  ParseError("auto,");
  ParseError("off:1");
  ParseError(",verbose");
}

TEST(UserOptions, HelpListsEveryItem) {
  const std::string help = UserOptionsHelp();
  for (const char* item : {"auto", "off", "ranks-per-gpu:N", "mpi:FAMILY", "verbose", "report[:DIR]", "help"}) {
    EXPECT_NE(help.find(item), std::string::npos) << item;
  }
}

}  // namespace
}  // namespace mla
