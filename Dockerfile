# syntax=docker/dockerfile:1
# asiocrawl as a container: a Debian bookworm build stage that installs the same packages as a developer machine
# (scripts/install-deps.sh), builds and runs the whole test suite, then a slim runtime stage holding only the CLI
# and the shared libraries it loads. See docs/DEPLOY.md.
#
#   docker build -t asiocrawl .
#   docker run --rm -v "$PWD/out:/data" asiocrawl https://example.com/
#
# Build arguments: BUILD_JOBS (compile jobs; default: every core), RUN_TESTS (ON/OFF, default ON).

FROM debian:bookworm AS build
ARG BUILD_JOBS=
ARG RUN_TESTS=ON
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
RUN /src/scripts/install-deps.sh \
 && apt-get install -y -qq --no-install-recommends ccache >/dev/null
WORKDIR /src
COPY . /src
# The ccache cache mount makes rebuilds after a source change incremental; the image does not keep it.
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
      -DASIOCRAWL_BUILD_TESTS=${RUN_TESTS} >/dev/null \
 && cmake --build /build -j "${BUILD_JOBS:-$(nproc)}" \
 && if [ "${RUN_TESTS}" = ON ]; then ctest --test-dir /build --output-on-failure -j 2; fi \
 && cmake --install /build --prefix /out --strip >/dev/null
# The runtime stage installs the Debian packages owning the shared libraries the CLI loads, so a dependency a
# future change links (TLS, YAML, expat) reaches the image without editing this file.
RUN deploy/runtime-packages.sh /out/bin/asiocrawl >/out/runtime-packages && cat /out/runtime-packages

FROM debian:bookworm-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /out/runtime-packages /tmp/runtime-packages
# tini as PID 1 forwards SIGTERM to the crawler (which then finishes the fetches in flight and writes its
# report) and reaps zombies; ca-certificates for https roots.
RUN apt-get update -qq \
 && xargs -a /tmp/runtime-packages apt-get install -y -qq --no-install-recommends tini ca-certificates >/dev/null \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/cache/debconf/*-old /tmp/runtime-packages \
 && groupadd --system --gid 10001 asiocrawl \
 && useradd --system --uid 10001 --gid asiocrawl --home-dir /data --no-create-home asiocrawl \
 && mkdir -p /data /etc/asiocrawl && chown asiocrawl:asiocrawl /data
COPY --from=build /out/bin/asiocrawl /usr/local/bin/asiocrawl
COPY deploy/entrypoint.sh /usr/local/bin/asiocrawl-entrypoint
COPY deploy/asiocrawl.yaml /etc/asiocrawl/asiocrawl.yaml
# Read by the entrypoint: the config file passed as --config (empty: none). TINI_SUBREAPER lets tini reap
# orphans also when it is not PID 1 (docker run --pid=host, buildah's chroot isolation).
ENV ASIOCRAWL_CONFIG=/etc/asiocrawl/asiocrawl.yaml TINI_SUBREAPER=1
USER asiocrawl:asiocrawl
WORKDIR /data
VOLUME ["/data"]
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/asiocrawl-entrypoint"]
CMD ["--help"]
