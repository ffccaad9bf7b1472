// The one table from a crawl's failure code to the CLI's exit status (docs/DEPLOY.md, "Exit status"): a
// store or an output that refuses the crawl is a usage error (2), one that failed is a failed run (1), and
// whatever else async_run might complete with is a failed run too. The end-to-end statuses are in
// cli_test, shared_crawl_test and state_disk_test.
#include "cli/exit_status.hpp"

#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>

#include <gtest/gtest.h>

namespace {

using asiocrawl::error;
using asiocrawl::cli::exit_rule_for;

TEST(exit_status, a_refused_crawl_is_a_usage_error_printed_without_error_prefix) {
    for (const error e :
         {error::invalid_config, error::state_mismatch, error::state_locked, error::state_unusable,
          error::store_damaged, error::redis_refused, error::output_exists, error::output_unavailable}) {
        const auto rule = exit_rule_for(e);
        EXPECT_EQ(rule.status, 2) << error_kind(e);
        EXPECT_EQ(rule.prefix, "") << error_kind(e);
    }
}

TEST(exit_status, a_failed_store_or_output_is_a_failed_run) {
    for (const error e :
         {error::store_write_failed, error::redis_unreachable, error::redis_lost, error::output_failed}) {
        const auto rule = exit_rule_for(e);
        EXPECT_EQ(rule.status, 1) << error_kind(e);
        EXPECT_EQ(rule.prefix, "error: ") << error_kind(e);
    }
}

TEST(exit_status, anything_else_is_a_crawl_that_failed) {
    for (const boost::system::error_code ec :
         {boost::system::error_code(error::internal_error), boost::system::error_code(error::redirect_limit),
          boost::system::error_code(boost::asio::error::already_started)}) {
        const auto rule = exit_rule_for(ec);
        EXPECT_EQ(rule.status, 1) << ec.message();
        EXPECT_EQ(rule.prefix, "error: crawl failed: ") << ec.message();
    }
}

} // namespace
