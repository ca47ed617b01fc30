// The one comma-list parser (core/util/comma_list.h): items, whole numbers with a lower bound,
// numbers, and errors that name the flag or setting; and the CLI's list flags reading through it.
#include "core/util/comma_list.h"
#include "core/util/error.h"
#include "tests/support/catch.h"
#include "tests/support/cli_process.h"

using namespace comera;
using Catch::Matchers::Contains;

TEST_CASE("comma lists: items, whole numbers and numbers", "[comma_list]") {
  CHECK(split_list("attention,ffn_in", "--layers") == std::vector<std::string>{"attention", "ffn_in"});
  CHECK(split_list(" a , b ", "--x") == std::vector<std::string>{"a", "b"});
  CHECK(split_list("one", "--x") == std::vector<std::string>{"one"});
  CHECK(int_list("1,12,30", "rank list") == std::vector<int64_t>{1, 12, 30});
  CHECK(int_list("-3,0", "--x") == std::vector<int64_t>{-3, 0});
  CHECK(number_list("2,0.5,1e3", "--ref") == std::vector<double>{2, 0.5, 1000});
  CHECK(join_list({1, 12, 30}) == "1,12,30");
  CHECK(int_list(join_list({4, 8}), "--x") == std::vector<int64_t>{4, 8});
}

TEST_CASE("comma lists: errors name the flag and the bad item", "[comma_list]") {
  CHECK_THROWS_WITH(int_list("4096,4k", "--ids"),
                    Contains("--ids: '4k' in '4096,4k' is not a whole number") && Contains("4,8,16"));
  CHECK_THROWS_WITH(int_list("1.5", "--tokens"), Contains("--tokens: '1.5'"));
  CHECK_THROWS_WITH(int_list("99999999999999999999", "--x"), Contains("not a whole number"));
  CHECK_THROWS_WITH(int_list("4,0", "--tokens", 1), Contains("--tokens: 0 in '4,0' is below 1"));
  CHECK_THROWS_WITH(number_list("2,x", "--ref"), Contains("--ref: 'x' in '2,x' is not a number"));
  CHECK_THROWS_WITH(split_list("", "--layers"), Contains("--layers: the list is empty"));
  CHECK_THROWS_WITH(split_list("a,,b", "--layers"), Contains("--layers: 'a,,b' has an empty item"));
  CHECK_THROWS_WITH(split_list("a,", "--layers"), Contains("has an empty item"));
}

TEST_CASE("list flags of the CLI read through the one parser", "[comma_list][cli]") {
  auto r = comera::testing::run_cli("bench ttm --ids 4096,4k");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--ids: '4k' in '4096,4k' is not a whole number"));
  r = comera::testing::run_cli("tune --in-modes 12,8,8 --out-modes 8,8,12 --tokens 32,0");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--tokens: 0 in '32,0' is below 1"));
  r = comera::testing::run_cli("bench paths --layers attention,,ffn_in");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--layers: 'attention,,ffn_in' has an empty item"));
  // A repeated list flag adds to the list: the second --where is read (and refused here).
  r = comera::testing::run_cli("pareto --study s --where kind=late --where bogus --db /nonexistent/x.db");
  CHECK(r.status != 0);
  CHECK_THAT(r.output, Contains("--where 'bogus'"));
}
