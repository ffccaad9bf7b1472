#include "http/tls_certificate.hpp"

#include <boost/asio/ip/address_v4.hpp>
#include <boost/asio/ip/address_v6.hpp>

#include <openssl/bio.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <ctime>

namespace asiocrawl::detail {

namespace asio = boost::asio;

namespace {

/// X.509 time as "2025-06-01 12:00:00 UTC".
std::string asn1_time_text(const ASN1_TIME* time) {
    std::tm t{};
    if (!time || ASN1_TIME_to_tm(time, &t) != 1)
        return "?";
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &t);
    return text;
}

std::string name_text(const X509_NAME* name) {
    if (!name)
        return "?";
    BIO* out = BIO_new(BIO_s_mem());
    X509_NAME_print_ex(out, name, 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long length = BIO_get_mem_data(out, &data);
    std::string text(data, static_cast<std::size_t>(length));
    BIO_free(out);
    return text;
}

/// The DNS names and IP addresses a certificate is for (its subjectAltName; the CN when it has none).
std::string certificate_names(X509* cert) {
    std::string names;
    auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
    if (sans) {
        for (int i = 0; i < sk_GENERAL_NAME_num(sans); ++i) {
            const GENERAL_NAME* name = sk_GENERAL_NAME_value(sans, i);
            std::string entry;
            if (name->type == GEN_DNS) {
                const auto* s = name->d.dNSName;
                entry.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                             static_cast<std::size_t>(ASN1_STRING_length(s)));
            } else if (name->type == GEN_IPADD) {
                const auto* s = name->d.iPAddress;
                const auto* bytes = ASN1_STRING_get0_data(s);
                if (ASN1_STRING_length(s) == 4)
                    entry = asio::ip::address_v4({bytes[0], bytes[1], bytes[2], bytes[3]}).to_string();
                else if (ASN1_STRING_length(s) == 16) {
                    asio::ip::address_v6::bytes_type b;
                    std::copy(bytes, bytes + 16, b.begin());
                    entry = asio::ip::address_v6(b).to_string();
                }
            }
            if (!entry.empty())
                names += (names.empty() ? "" : ", ") + entry;
            if (names.size() > 300) {
                names += ", ...";
                break;
            }
        }
        GENERAL_NAMES_free(sans);
    }
    if (names.empty())
        names = name_text(X509_get_subject_name(cert));
    return names;
}

} // namespace

/// Why a certificate did not verify, for people: the verification result with what it is about.
std::string certificate_problem(SSL* ssl, long verify, const std::string& host) {
    STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl); // kept by OpenSSL after a failed verification
    X509* leaf = chain && sk_X509_num(chain) > 0 ? sk_X509_value(chain, 0) : nullptr;
    std::string text = X509_verify_cert_error_string(verify);
    if (!leaf)
        return text;
    switch (verify) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
        text += ": expired " + asn1_time_text(X509_get0_notAfter(leaf)) + " (" +
                name_text(X509_get_subject_name(leaf)) + ")";
        break;
    case X509_V_ERR_CERT_NOT_YET_VALID:
        text += ": valid from " + asn1_time_text(X509_get0_notBefore(leaf)) + " (" +
                name_text(X509_get_subject_name(leaf)) + ")";
        break;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        text += ": the certificate is for " + certificate_names(leaf) + ", not " + host;
        break;
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: {
        X509* last = sk_X509_value(chain, sk_X509_num(chain) - 1);
        text += ": issuer " + name_text(X509_get_issuer_name(last)) + " is not trusted (certificate for " +
                certificate_names(leaf) + ")";
        break;
    }
    default:
        text += " (certificate for " + certificate_names(leaf) + ")";
        break;
    }
    return text;
}

} // namespace asiocrawl::detail
