#include "state/record_codec.hpp"

#include "state/varint.hpp"

#include "html/links.hpp"
#include <asiocrawl/error.hpp>

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>

#include <array>
#include <deque>
#include <mutex>
#include <string_view>

namespace asiocrawl::detail {

namespace {

const std::array<const boost::system::error_category*, 7>& known_categories() {
    static const std::array<const boost::system::error_category*, 7> categories{
        &boost::system::system_category(),
        &boost::system::generic_category(),
        &error_category(),
        &boost::asio::error::get_netdb_category(),
        &boost::asio::error::get_addrinfo_category(),
        &boost::asio::error::get_misc_category(),
        &boost::beast::http::make_error_code(boost::beast::http::error::bad_version).category(),
    };
    return categories;
}

/// Errors of categories this build does not know by name: each distinct message gets a number.
class restored_category final : public boost::system::error_category {
public:
    const char* name() const noexcept override { return "asiocrawl.restored"; }
    std::string message(int value) const override {
        std::lock_guard lock(mutex_);
        return value > 0 && static_cast<std::size_t>(value) <= messages_.size()
                   ? messages_[static_cast<std::size_t>(value) - 1]
                   : "restored error";
    }
    int intern(std::string message) const {
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < messages_.size(); ++i)
            if (messages_[i] == message)
                return static_cast<int>(i + 1);
        messages_.push_back(std::move(message));
        return static_cast<int>(messages_.size());
    }

private:
    mutable std::mutex mutex_;
    mutable std::deque<std::string> messages_;
};

const restored_category& restored() {
    static const restored_category category;
    return category;
}

// A record keeps its requisite kind by name; the state keeps kind + 1, 0 for none.
std::uint64_t requisite_code(std::string_view name) {
    if (name.empty())
        return 0;
    for (std::uint64_t kind = 0; kind <= static_cast<std::uint64_t>(requisite_kind::style); ++kind)
        if (requisite_kind_name(static_cast<requisite_kind>(kind)) == name)
            return kind + 1;
    return 0;
}

// The protocol of the answer, last in a record and absent from records written before it was kept (they read
// back with none): 0 none, 1 http/1.1, 2 h2.
constexpr std::array<std::string_view, 3> protocols{"", "http/1.1", "h2"};

std::uint64_t protocol_code(std::string_view name) {
    for (std::size_t code = 1; code < protocols.size(); ++code)
        if (protocols[code] == name)
            return code;
    return 0;
}

} // namespace

std::string encode(const record& r) {
    std::string out;
    out.reserve(64 + r.url.size() + r.next_url.size() + r.referrer.size());
    put_string(out, r.url);
    put_string(out, r.next_url);
    put_string(out, r.referrer);
    put_varint(out, static_cast<std::uint64_t>(r.status));
    put_string(out, r.error ? std::string_view(r.error.category().name()) : std::string_view());
    put_varint(out, zigzag(r.error.value()));
    put_string(out, r.error ? r.error.message() : std::string());
    put_string(out, r.error_detail);
    put_varint(out, r.size);
    put_string(out, r.content_type);
    put_string(out, r.charset);
    put_string(out, r.charset_source);
    put_varint(out, r.num_urls);
    put_varint(out, r.num_new_urls);
    put_varint(out, zigzag(r.depth));
    put_varint(out, zigzag(r.tries));
    // from_sitemap in bit 0; a requisite's kind + 1 above it (0: not a requisite), so older states read.
    put_varint(out, (r.from_sitemap ? 1u : 0u) | (requisite_code(r.requisite) << 1));
    put_varint(out, zigzag(r.started.count()));
    put_varint(out, zigzag(r.elapsed.count()));
    put_varint(out, protocol_code(r.protocol));
    return out;
}

std::optional<record> decode_record(std::string_view bytes) {
    varint_reader in{bytes};
    record r;
    auto url = in.string(), next_url = in.string(), referrer = in.string();
    auto status = in.varint();
    auto category = in.string();
    auto value = in.varint();
    auto message = in.string(), detail = in.string();
    auto size = in.varint();
    auto content_type = in.string(), charset = in.string(), charset_source = in.string();
    auto num_urls = in.varint(), num_new_urls = in.varint(), depth = in.varint(), tries = in.varint(),
         from_sitemap = in.varint(), started = in.varint(), elapsed = in.varint();
    if (!url || !next_url || !referrer || !status || !category || !value || !message || !detail || !size ||
        !content_type || !charset || !charset_source || !num_urls || !num_new_urls || !depth || !tries ||
        !from_sitemap || !started || !elapsed)
        return std::nullopt;
    // A record written before the protocol was kept ends here.
    std::optional<std::uint64_t> protocol = in.at_end() ? std::optional<std::uint64_t>(0) : in.varint();
    if (!protocol || *protocol >= protocols.size() || !in.at_end())
        return std::nullopt;
    r.protocol = protocols[*protocol];
    r.url = std::move(*url);
    r.next_url = std::move(*next_url);
    r.referrer = std::move(*referrer);
    r.status = static_cast<int>(*status);
    if (!category->empty()) {
        const int code = static_cast<int>(unzigzag(*value));
        const boost::system::error_category* found = nullptr;
        for (const auto* known : known_categories())
            if (*category == known->name())
                found = known;
        if (found)
            r.error.assign(code, *found);
        else
            r.error.assign(restored().intern(std::move(*message)), restored());
    }
    r.error_detail = std::move(*detail);
    r.size = *size;
    r.content_type = std::move(*content_type);
    r.charset = std::move(*charset);
    r.charset_source = std::move(*charset_source);
    r.num_urls = static_cast<std::size_t>(*num_urls);
    r.num_new_urls = static_cast<std::size_t>(*num_new_urls);
    r.depth = static_cast<int>(unzigzag(*depth));
    r.tries = static_cast<int>(unzigzag(*tries));
    r.from_sitemap = (*from_sitemap & 1) != 0;
    if (const auto requisite = *from_sitemap >> 1; requisite != 0) {
        if (requisite > static_cast<std::uint64_t>(requisite_kind::style) + 1)
            return std::nullopt;
        r.requisite = requisite_kind_name(static_cast<requisite_kind>(requisite - 1));
    }
    r.started = std::chrono::microseconds(unzigzag(*started));
    r.elapsed = std::chrono::microseconds(unzigzag(*elapsed));
    return r;
}

} // namespace asiocrawl::detail
