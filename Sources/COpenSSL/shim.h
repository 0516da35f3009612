/*
 * OpenSSL for IsletTransport's TLS listener and its ES256 keys (APNs provider
 * tokens). Macros Swift cannot import are re-exported as islet_-prefixed
 * inline functions. No logic lives here.
 */
#ifndef ISLET_COPENSSL_SHIM_H
#define ISLET_COPENSSL_SHIM_H

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

static inline long
islet_ssl_ctx_set_min_tls12(SSL_CTX *ctx) {
  return SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

static inline long
islet_ssl_ctx_set_release_buffers(SSL_CTX *ctx) {
  return SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
}

#endif
