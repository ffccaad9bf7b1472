// asiocrawl-bench-score: compares the requests of one crawl (nginx access log lines "<host> <request-uri>
// <status>") with the ground truth (expected.txt, one normalized target per line) and prints one line:
//   requests=N distinct=N missed=N wrong=N duplicates=N robots=N
// A logged target is put in the generator's normalized form first (percent-encoding with uppercase hex,
// unreserved characters decoded), so a crawler is not blamed for spelling a correct URL differently.
// A request whose host name (nginx's $host, without the port) is not HOST is wrong: the same server reached
// as "localhost" is a link the crawler should have left alone. /robots.txt is counted apart, never as wrong:
// fetching it is legitimate.

#include <fstream>
#include <iostream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool is_unreserved(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '.' || c == '_' || c == '~';
}

std::string normalize(std::string_view target) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < target.size(); ++i) {
        if (target[i] == '%' && i + 2 < target.size() && hex_value(target[i + 1]) >= 0 &&
            hex_value(target[i + 2]) >= 0) {
            const auto value =
                static_cast<unsigned char>(hex_value(target[i + 1]) * 16 + hex_value(target[i + 2]));
            if (is_unreserved(value)) {
                out += static_cast<char>(value);
            } else {
                out += '%';
                out += hex[value >> 4];
                out += hex[value & 15];
            }
            i += 2;
        } else {
            out += target[i];
        }
    }
    return out;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::cerr << "Usage: asiocrawl-bench-score EXPECTED_FILE ACCESS_LOG_SLICE HOST\n";
        return 2;
    }
    std::ifstream expected_file(argv[1]);
    std::ifstream log(argv[2]);
    if (!expected_file || !log) {
        std::cerr << "asiocrawl-bench-score: cannot read the inputs\n";
        return 1;
    }
    std::set<std::string, std::less<>> expected;
    for (std::string line; std::getline(expected_file, line);)
        expected.insert(line);

    std::unordered_map<std::string, std::size_t> seen;
    std::size_t requests = 0, wrong = 0, robots = 0;
    for (std::string line; std::getline(log, line);) {
        const std::string_view fields = std::string_view(line).substr(0, line.rfind(' '));
        const auto space = fields.find(' ');
        const std::string_view host = fields.substr(0, space);
        const std::string_view raw = space == std::string_view::npos ? "" : fields.substr(space + 1);
        // Another host keeps its name in the key, so it can never match the ground truth.
        const std::string target = host == argv[3] ? normalize(raw) : std::string(host) + normalize(raw);
        ++requests;
        if (target == "/robots.txt") {
            ++robots;
            continue;
        }
        if (++seen[target] == 1 && expected.count(target) == 0)
            ++wrong;
    }
    std::size_t missed = 0;
    for (const auto& target : expected)
        missed += seen.count(target) == 0 ? 1 : 0;
    std::size_t duplicates = 0;
    for (const auto& [target, count] : seen)
        duplicates += count - 1;
    std::cout << "requests=" << requests << " distinct=" << seen.size() << " missed=" << missed
              << " wrong=" << wrong << " duplicates=" << duplicates << " robots=" << robots << "\n";
    return 0;
}
