// The command line's side of the plumbing: the proxy variables, repeated --header values that hold commas,
// the cookie and DNS flags.
#include "cli/options.hpp"

#include "support/command_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace asiocrawl;
using namespace asiocrawl::cli;

cli_options parsed(std::vector<std::string> args, const std::vector<std::string>& environment = {}) {
    auto outcome = asiocrawl::test::parse_arguments(std::move(args), environment);
    if (auto* error = std::get_if<usage_error>(&outcome))
        ADD_FAILURE() << error->message;
    if (auto* options = std::get_if<cli_options>(&outcome))
        return *options;
    return {};
}

TEST(plumbing_cli, proxy_variables_are_read_unless_a_proxy_is_configured) {
    const std::vector<std::string> env{"http_proxy=http://p:3128", "HTTPS_PROXY=http://q:3128",
                                       "no_proxy=localhost,.internal"};
    auto fetch = parsed({"example.com"}, env).config.crawl.fetch;
    EXPECT_EQ(fetch.http_proxy, "http://p:3128");
    EXPECT_EQ(fetch.https_proxy, "http://q:3128");
    EXPECT_EQ(fetch.no_proxy, (std::vector<std::string>{"localhost", ".internal"}));

    fetch = parsed({"--proxy", "", "example.com"}, env).config.crawl.fetch;
    EXPECT_EQ(fetch.proxy, "");
    EXPECT_EQ(fetch.http_proxy, "") << "--proxy \"\" turns the environment's proxy off";
    EXPECT_EQ(fetch.https_proxy, "");

    auto with_variable = env;
    with_variable.push_back("ASIOCRAWL_FETCH_HTTPS_PROXY=http://mine:1");
    fetch = parsed({"example.com"}, with_variable).config.crawl.fetch;
    EXPECT_EQ(fetch.https_proxy, "http://mine:1");
    EXPECT_EQ(fetch.http_proxy, "");
}

TEST(plumbing_cli, each_header_flag_is_one_field_commas_and_all) {
    auto fetch = parsed({"--header", "Accept-Language: fr, en;q=0.5", "--header", "X-A: b c", "example.com"})
                     .config.crawl.fetch;
    EXPECT_EQ(fetch.headers, (std::vector<std::string>{"Accept-Language: fr, en;q=0.5", "X-A: b c"}));
    fetch = parsed({"example.com"}, {"ASIOCRAWL_FETCH_HEADERS=X-A: 1, 2\nX-B: 3"}).config.crawl.fetch;
    EXPECT_EQ(fetch.headers, (std::vector<std::string>{"X-A: 1, 2", "X-B: 3"}));
}

TEST(plumbing_cli, cookie_dns_and_log_flags) {
    const auto config =
        parsed({"--no-cookies", "--load-cookies", "in.txt", "--save-cookies", "out.txt", "--dns-server",
                "127.0.0.1:5353", "--dns-server", "[::1]:53", "--unicode-hosts", "example.com"})
            .config;
    EXPECT_FALSE(config.crawl.fetch.cookies.enabled);
    EXPECT_EQ(config.crawl.fetch.cookies.load_file, "in.txt");
    EXPECT_EQ(config.crawl.fetch.cookies.save_file, "out.txt");
    EXPECT_EQ(config.crawl.fetch.dns.servers, (std::vector<std::string>{"127.0.0.1:5353", "[::1]:53"}));
    EXPECT_TRUE(config.run.unicode_hosts_in_logs);
}

TEST(plumbing_cli, a_refused_header_is_a_usage_error) {
    const char* argv[] = {"asiocrawl", "--header", "Connection: close", "example.com"};
    auto outcome = parse_command_line(4, argv, {});
    ASSERT_TRUE(std::holds_alternative<usage_error>(outcome));
    EXPECT_NE(std::get<usage_error>(outcome).message.find("fetch.headers: Connection"), std::string::npos)
        << std::get<usage_error>(outcome).message;
}

} // namespace
