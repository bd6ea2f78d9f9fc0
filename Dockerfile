# revtrail's container image: `docker build -t revtrail:0.1.0 .`
# The build stage compiles and installs into /out; the runtime stage is
# Debian slim with the shared libraries only, running as user revtrail
# (uid 10001, as the Helm chart in deploy/helm/revtrail and the manifests
# rendered from it in deploy/kubernetes expect).
FROM debian:bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	build-essential pkg-config libpcre2-dev librdkafka-dev libcjson-dev \
	libsqlite3-dev zlib1g-dev libmicrohttpd-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make clean && make -j"$(nproc)" \
 && make install PREFIX=/usr DESTDIR=/out

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
	libpcre2-8-0 librdkafka1 libcjson1 libsqlite3-0 zlib1g libmicrohttpd12 \
	ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 revtrail \
 && useradd --system --uid 10001 --gid revtrail --home-dir /var/lib/revtrail \
	--shell /usr/sbin/nologin revtrail \
 && install -d -o revtrail -g revtrail /var/lib/revtrail
COPY --from=build /out/usr/bin/revtrail /usr/bin/revtrail
COPY --from=build /out/usr/share/man/man1/revtrail.1 /usr/share/man/man1/
COPY --from=build /out/etc/revtrail/kafka.properties.example /etc/revtrail/
USER revtrail
WORKDIR /var/lib/revtrail
ENV REVTRAIL_DB=/var/lib/revtrail/revtrail.db
ENTRYPOINT ["revtrail"]
CMD ["--help"]
