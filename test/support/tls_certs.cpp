#include "support/tls_certs.hpp"

#include <boost/asio/ip/address.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <stdexcept>

#include <unistd.h>

namespace asiocrawl::test {

namespace {

template <auto free_function>
struct openssl_deleter {
    template <class T>
    void operator()(T* p) const noexcept {
        free_function(p);
    }
};
using key_ptr = std::unique_ptr<EVP_PKEY, openssl_deleter<EVP_PKEY_free>>;
using cert_ptr = std::unique_ptr<X509, openssl_deleter<X509_free>>;
using bio_ptr = std::unique_ptr<BIO, openssl_deleter<BIO_free>>;

void check(bool ok, const char* what) {
    if (!ok)
        throw std::runtime_error(std::string("OpenSSL: ") + what);
}

key_ptr make_key() {
    key_ptr key{EVP_EC_gen("P-256")};
    check(key != nullptr, "EVP_EC_gen");
    return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    check(ext != nullptr, "X509V3_EXT_conf_nid");
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
}

cert_ptr make_cert(const std::string& common_name, EVP_PKEY* key, X509* issuer, long serial,
                   std::chrono::seconds not_before = std::chrono::hours(-1),
                   std::chrono::seconds not_after = std::chrono::hours(24)) {
    cert_ptr cert{X509_new()};
    check(cert != nullptr, "X509_new");
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), static_cast<long>(not_before.count()));
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(not_after.count()));
    X509_set_pubkey(cert.get(), key);
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
    return cert;
}

std::string to_pem(X509* cert) {
    bio_ptr bio{BIO_new(BIO_s_mem())};
    check(PEM_write_bio_X509(bio.get(), cert) == 1, "PEM_write_bio_X509");
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

std::string to_pem(EVP_PKEY* key) {
    bio_ptr bio{BIO_new(BIO_s_mem())};
    check(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) == 1,
          "PEM_write_bio_PrivateKey");
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

} // namespace

test_pki make_test_pki(const std::vector<std::string>& names, std::chrono::seconds valid_from,
                       std::chrono::seconds valid_until) {
    static std::atomic<long> serial{1};
    auto ca_key = make_key();
    auto ca = make_cert("asiocrawl test CA", ca_key.get(), nullptr, serial++);
    add_extension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
    add_extension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
    add_extension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
    check(X509_sign(ca.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign CA");

    auto server_key = make_key();
    auto server = make_cert(names.empty() ? "server" : names.front(), server_key.get(), ca.get(), serial++,
                            valid_from, valid_until);
    std::string san;
    for (const auto& n : names) {
        boost::system::error_code ec;
        boost::asio::ip::make_address(n, ec);
        san += (san.empty() ? "" : ",") + std::string(ec ? "DNS:" : "IP:") + n;
    }
    add_extension(server.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
    add_extension(server.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
    add_extension(server.get(), ca.get(), NID_ext_key_usage, "serverAuth");
    add_extension(server.get(), ca.get(), NID_authority_key_identifier, "keyid");
    if (!san.empty())
        add_extension(server.get(), ca.get(), NID_subject_alt_name, san);
    check(X509_sign(server.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign server");

    auto client_key = make_key();
    auto client = make_cert("asiocrawl test client", client_key.get(), ca.get(), serial++);
    add_extension(client.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
    add_extension(client.get(), ca.get(), NID_key_usage, "critical,digitalSignature");
    add_extension(client.get(), ca.get(), NID_ext_key_usage, "clientAuth");
    add_extension(client.get(), ca.get(), NID_authority_key_identifier, "keyid");
    check(X509_sign(client.get(), ca_key.get(), EVP_sha256()) > 0, "X509_sign client");

    return test_pki{to_pem(ca.get()), to_pem(server.get()), to_pem(server_key.get()), to_pem(client.get()),
                    to_pem(client_key.get())};
}

boost::asio::ssl::context make_server_context(const test_pki& pki) {
    namespace ssl = boost::asio::ssl;
    ssl::context context{ssl::context::tls_server};
    context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                        ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    context.use_certificate_chain(boost::asio::buffer(pki.server_cert_pem));
    context.use_private_key(boost::asio::buffer(pki.server_key_pem), ssl::context::pem);
    return context;
}

temp_pem_file::temp_pem_file(const std::string& pem) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("asiocrawl-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".pem");
    std::ofstream out{path_, std::ios::binary | std::ios::trunc};
    out << pem;
    if (!out.flush())
        throw std::runtime_error("cannot write " + path_.string());
}

temp_pem_file::~temp_pem_file() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
}

} // namespace asiocrawl::test
