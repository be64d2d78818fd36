// tidy_svg and thin_by_max: smaller charts that draw the same thing.
#include <gtest/gtest.h>

#include "report/charts.hpp"

namespace lockbench::report::detail {
namespace {

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

const std::string kGnuplotLike =
    "<svg viewBox=\"0 0 960 300\">\n"
    "<g fill=\"none\" color=\"#FFFFFF\" stroke=\"rgb( 31, 119, 180)\" stroke-width=\"2.00\">\n"
    "</g>\n"
    "\t<g id=\"outer\" >\n\t<g stroke=\"black\">\n\t</g>\n</g>\n"
    "<g fill=\"none\" color=\"black\" stroke=\"currentColor\">\n"
    "\t<path stroke='rgb( 31, 119, 180)'  d='M82.59,77.11 L105.54,77.15 M86.09,268.19 L-4.96,247.64  '/>"
    "\t<use xlink:href='#gpPt6' transform='translate(86.09,268.19) scale(3.15)' color='rgb(  0,   0,   0)'/>\n"
    "\t<g transform=\"translate(112.59,80.36)\" stroke=\"none\" fill=\"black\">\n"
    "\t\t<text>18.70 ok/s at rgb(1, 2, 3)</text>\n"
    "\t</g>\n"
    "</g>\n"
    "</svg>\n";

TEST(TidySvg, DropsEmptyGroupsAndNestedOnesThatBecomeEmpty) {
  const std::string t = tidy_svg(kGnuplotLike);
  EXPECT_EQ(count(t, "<g "), 2) << t;  // the drawing's group and the text's
  EXPECT_EQ(count(t, "</g>"), 2) << t;
  EXPECT_EQ(t.find("id=\"outer\""), std::string::npos) << t;
}

TEST(TidySvg, RoundsPathDataAndTransformsToATenthOfAPixel) {
  const std::string t = tidy_svg(kGnuplotLike);
  EXPECT_NE(t.find("d='M82.6,77.1 L105.5,77.2 M86.1,268.2 L-5,247.6  '"), std::string::npos) << t;
  EXPECT_NE(t.find("transform='translate(86.1,268.2) scale(3.2)'"), std::string::npos) << t;
  EXPECT_NE(t.find("transform=\"translate(112.6,80.4)\""), std::string::npos) << t;
}

TEST(TidySvg, WritesColoursAsHexAndNeverTouchesText) {
  const std::string t = tidy_svg(kGnuplotLike);
  EXPECT_NE(t.find("stroke='#1f77b4'"), std::string::npos) << t;
  EXPECT_NE(t.find("color='#000000'"), std::string::npos) << t;
  EXPECT_NE(t.find("<text>18.70 ok/s at rgb(1, 2, 3)</text>"), std::string::npos) << t;
  EXPECT_EQ(count(t, "<path"), count(kGnuplotLike, "<path"));
  EXPECT_EQ(count(t, "<use"), count(kGnuplotLike, "<use"));
  EXPECT_LT(t.size(), kGnuplotLike.size());
}

TEST(TidySvg, JoinsAGroupWithTheAlikeGroupThatFollowsIt) {
  const std::string svg =
      "<svg>\n<g stroke=\"a\">\n<path d='M1,1'/>\n</g>\n<g stroke=\"a\">\n<path d='M2,2'/>\n</g>\n"
      "<g stroke=\"b\">\n<path d='M3,3'/>\n</g>\n</svg>\n";
  const std::string t = tidy_svg(svg);
  EXPECT_EQ(t, "<svg>\n<g stroke=\"a\">\n<path d='M1,1'/>\n<path d='M2,2'/>\n</g>\n<g stroke=\"b\">\n"
               "<path d='M3,3'/>\n</g>\n</svg>\n");
  EXPECT_EQ(count(t, "<path"), 3);
}

TEST(TidySvg, ASecondPassChangesNothing) {
  const std::string once = tidy_svg(kGnuplotLike);
  EXPECT_EQ(tidy_svg(once), once);
}

TEST(ThinByMax, KeepsEveryPeakAndTheFirstTimeOfEachRun) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < 1000; ++i) rows.push_back({i * 0.5, i == 437 ? 99.0 : 1.0, i == 998 ? 7.0 : 0.0});
  const auto thin = thin_by_max(rows, 150);
  ASSERT_LE(thin.size(), 150u);
  ASSERT_GE(thin.size(), 140u);
  double peak = 0, last_peak = 0;
  for (const auto& r : thin) peak = std::max(peak, r[1]), last_peak = std::max(last_peak, r[2]);
  EXPECT_EQ(peak, 99.0);
  EXPECT_EQ(last_peak, 7.0);
  EXPECT_EQ(thin[0][0], 0.0);
  EXPECT_EQ(thin[1][0], 3.5);  // 1000 rows in runs of 7
}

TEST(ThinByMax, LeavesAShortSeriesAsItIs) {
  const std::vector<std::vector<double>> rows = {{0, 1, 2}, {1, 3, 4}};
  EXPECT_EQ(thin_by_max(rows, 150), rows);
}

}  // namespace
}  // namespace lockbench::report::detail
