#include <asiocrawl/config.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace {

using asiocrawl::crawler_config;
using asiocrawl::validate;
using namespace std::chrono_literals;

std::vector<std::string> messages(const std::vector<asiocrawl::config_problem>& problems) {
    std::vector<std::string> out;
    for (const auto& p : problems)
        out.push_back(p.message);
    return out;
}

crawler_config valid_config() {
    crawler_config config;
    config.roots = {"http://example.com/"};
    return config;
}

TEST(Validate, DefaultConfigWithOneRootIsValid) {
    EXPECT_THAT(validate(valid_config()), testing::IsEmpty());
}

TEST(Validate, BoundaryValuesAreValid) {
    crawler_config config = valid_config();
    config.roots = {"example.com", "https://other.example/deep/"};
    config.max_tasks = 1;
    config.max_redirect = 0;
    config.max_tries = 1;
    config.max_depth = 0;
    config.max_pages = 1;
    config.fetch.connect_timeout = 1ms;
    config.fetch.request_timeout = 1ms;
    config.fetch.max_body_bytes = 1;
    config.fetch.max_header_bytes = 1024;
    config.fetch.idle_timeout = 0ms;
    EXPECT_THAT(validate(config), testing::IsEmpty());

    config.max_tasks = 100'000;
    EXPECT_THAT(validate(config), testing::IsEmpty());
}

struct invalid_case {
    const char* name;
    std::function<void(crawler_config&)> break_config;
    const char* message;
};

std::ostream& operator<<(std::ostream& out, const invalid_case& c) {
    return out << c.name;
}

class ValidateRejects : public testing::TestWithParam<invalid_case> {};

TEST_P(ValidateRejects, WithExactlyOneMessageNamingTheField) {
    crawler_config config = valid_config();
    GetParam().break_config(config);
    EXPECT_THAT(messages(validate(config)), testing::ElementsAre(GetParam().message));
}

const invalid_case invalid_cases[] = {
    {"no_roots", [](crawler_config& c) { c.roots.clear(); },
     "roots must contain at least one URL (or give input_file)"},
    {"empty_root", [](crawler_config& c) { c.roots = {""}; }, "roots[0] must not be empty"},
    {"blank_second_root", [](crawler_config& c) { c.roots.push_back(" \t"); }, "roots[1] must not be empty"},
    {"zero_max_tasks", [](crawler_config& c) { c.max_tasks = 0; }, "max_tasks must be at least 1"},
    {"huge_max_tasks", [](crawler_config& c) { c.max_tasks = 100'001; }, "max_tasks must be at most 100000"},
    {"negative_max_redirect", [](crawler_config& c) { c.max_redirect = -1; },
     "max_redirect must be at least 0"},
    {"zero_max_tries", [](crawler_config& c) { c.max_tries = 0; }, "max_tries must be at least 1"},
    {"negative_max_tries", [](crawler_config& c) { c.max_tries = -3; }, "max_tries must be at least 1"},
    {"negative_max_depth", [](crawler_config& c) { c.max_depth = -1; }, "max_depth must be at least 0"},
    {"zero_max_pages", [](crawler_config& c) { c.max_pages = 0; }, "max_pages must be at least 1"},
    {"retry_status_not_an_error",
     [](crawler_config& c) {
         c.retry.statuses = {429, 200};
     },
     "retry.statuses[1] must be an HTTP error status from 400 to 599, got 200"},
    {"accept_type_without_subtype", [](crawler_config& c) { c.accept_types = {"image"}; },
     "accept_types[0] must be a media type such as text/html, image/* or */*, got \"image\""},
    {"accept_type_star_subtype_only", [](crawler_config& c) { c.accept_types = {"*/png"}; },
     "accept_types[0] must be a media type such as text/html, image/* or */*, got \"*/png\""},
    {"negative_max_time", [](crawler_config& c) { c.max_time = std::chrono::milliseconds(-1); },
     "max_time must not be negative"},
    {"zero_target_concurrency", [](crawler_config& c) { c.politeness.autothrottle.target_concurrency = 0; },
     "politeness.autothrottle.target_concurrency must be above 0 and at most 1000"},
    {"zero_connect_timeout", [](crawler_config& c) { c.fetch.connect_timeout = 0ms; },
     "fetch.connect_timeout must be positive"},
    {"negative_connect_timeout", [](crawler_config& c) { c.fetch.connect_timeout = -5ms; },
     "fetch.connect_timeout must be positive"},
    {"zero_request_timeout", [](crawler_config& c) { c.fetch.request_timeout = 0ms; },
     "fetch.request_timeout must be positive"},
    {"zero_max_body_bytes", [](crawler_config& c) { c.fetch.max_body_bytes = 0; },
     "fetch.max_body_bytes must be at least 1"},
    {"small_max_header_bytes", [](crawler_config& c) { c.fetch.max_header_bytes = 1023; },
     "fetch.max_header_bytes must be at least 1024"},
    {"negative_idle_timeout", [](crawler_config& c) { c.fetch.idle_timeout = -1ms; },
     "fetch.idle_timeout must not be negative"},
    {"host_override_not_an_address",
     [](crawler_config& c) { c.fetch.host_overrides["a.test"] = "localhost"; },
     "fetch.host_overrides[\"a.test\"] must be an IPv4 or IPv6 address, got \"localhost\""},
    {"host_override_empty_host", [](crawler_config& c) { c.fetch.host_overrides[""] = "127.0.0.1"; },
     "fetch.host_overrides has an empty host name"},
    {"shared_continuous_recrawl",
     [](crawler_config& c) {
         c.continuous = true;
         c.state.redis = "redis://127.0.0.1:6379";
         c.state.recrawl = true;
     },
     "state.recrawl excludes continuous in a shared crawl (state.redis): a continuous crawl fetches each URL "
     "again when it is due, with no generations"},
};

TEST(Validate, ContinuousModeWorksInASharedCrawl) {
    crawler_config config = valid_config();
    config.continuous = true;
    config.state.redis = "redis://127.0.0.1:6379";
    EXPECT_THAT(validate(config), testing::IsEmpty());
}

TEST(Validate, HostOverridesTakeIpAddresses) {
    crawler_config config = valid_config();
    config.fetch.host_overrides = {{"a.test", "127.0.0.1"}, {"b.test", "::1"}, {"c.test", "2001:db8::7"}};
    EXPECT_THAT(validate(config), testing::IsEmpty());
}

INSTANTIATE_TEST_SUITE_P(Fields, ValidateRejects, testing::ValuesIn(invalid_cases),
                         [](const testing::TestParamInfo<invalid_case>& info) { return info.param.name; });

TEST(Validate, ReportsEveryProblem) {
    crawler_config config;
    config.max_tasks = 0;
    config.max_tries = 0;
    config.fetch.request_timeout = 0ms;
    EXPECT_THAT(messages(validate(config)),
                testing::ElementsAre("roots must contain at least one URL (or give input_file)",
                                     "max_tasks must be at least 1", "max_tries must be at least 1",
                                     "fetch.request_timeout must be positive"));
}

TEST(Validate, NamesTheKeyOfEveryProblemApartFromItsMessage) {
    crawler_config config = valid_config();
    config.roots = {"http://a.example/", "not a url"};
    config.max_tasks = 0;
    config.fetch.proxy = "https://user:secret@p:1";
    config.input_fd = 0; // standard input, unnamed
    const auto problems = validate(config);
    ASSERT_EQ(problems.size(), 4u) << testing::PrintToString(messages(problems));
    EXPECT_EQ(problems[0].key, "roots");
    EXPECT_THAT(problems[0].message, testing::StartsWith("roots[1] must be an http or https URL"));
    EXPECT_EQ(problems[1].key, "input_file");
    EXPECT_EQ(problems[1].message, "input_file must name the seeds read from input_fd");
    EXPECT_EQ(problems[2].key, "max_tasks");
    EXPECT_EQ(problems[2].message, "max_tasks must be at least 1");
    EXPECT_EQ(problems[3].key, "fetch.proxy");
    EXPECT_THAT(problems[3].message, testing::StartsWith("fetch.proxy: only http://"));
}

TEST(Validate, JudgesPatternsRootsAndDomains) {
    crawler_config config = valid_config();
    config.exclude = {"ok", "("};
    config.include = {"["};
    config.roots = {"http://a.example/", "not a url", "mailto:a@b.c"};
    config.domains = {"b.example", "http://c.example/"};
    config.exclude_domains = {""};
    config.accept = {"pdf", "a/b"};
    const auto problems = messages(validate(config));
    ASSERT_EQ(problems.size(), 7u) << testing::PrintToString(problems);
    EXPECT_THAT(problems[0], testing::StartsWith(
                                 "roots[1] must be an http or https URL (invalid URL), got \"not a url\""));
    EXPECT_THAT(problems[1],
                testing::StartsWith(
                    "roots[2] must be an http or https URL (unsupported URL scheme), got \"mailto:a@b.c\""));
    EXPECT_THAT(problems[2], testing::StartsWith("include[0] must be a regular expression"));
    EXPECT_THAT(problems[2], testing::EndsWith(", got \"[\""));
    EXPECT_THAT(problems[3], testing::StartsWith("exclude[1] must be a regular expression"));
    EXPECT_THAT(problems[4], testing::StartsWith("domains[1] must be a domain name"));
    EXPECT_THAT(problems[5], testing::StartsWith("exclude_domains[0] must be a domain name"));
    EXPECT_THAT(problems[6], testing::StartsWith("accept[1] must be a file-name suffix or pattern"));
}

} // namespace
