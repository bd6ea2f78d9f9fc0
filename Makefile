# revtrail: GNU Make, pkg-config, C11.
#   make                       ./revtrail
#   make demo                  install missing packages (as root), build, run on examples/
#   make test                  the same install step, then unit + end-to-end tests (prove)
#   make test SANITIZE=address,undefined   (runtime asserts on too)
#   make unit-MODULE           one module's unit tests (core, ingest, rules, correlate, store, pipeline, cli)
#   make fuzz                  libFuzzer harnesses (clang), FUZZ_SECONDS each
#   make bench | clean        (bench: tests/bench/run.sh, then tests/kafka/latency.sh)
#   make install | uninstall   PREFIX=/usr/local DESTDIR= (binary, man page,
#                              completions, systemd unit and sysusers.d file,
#                              example config)

VERSION ?= 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
# systemd looks in /usr/local/lib/systemd too; the config lives in /etc
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
SYSCONFDIR ?= /etc
CC ?= cc
PKG_CONFIG ?= pkg-config
# libmicrohttpd: the HTTP server of consume --http (cli/http.c says why)
PKGS := libpcre2-8 rdkafka libcjson sqlite3 zlib libmicrohttpd

# A library pkg-config cannot find stops the build here, by name, rather
# than as a missing header later. test and demo install what is missing
# first (tools/deps.sh) and then run make again, so they may go on.
PKG_MISSING := $(shell for p in $(PKGS); do $(PKG_CONFIG) --exists $$p \
	2>/dev/null || echo $$p; done)
ifneq ($(PKG_MISSING),)
ifneq ($(filter-out test demo clean,$(or $(MAKECMDGOALS),all)),)
$(error $(PKG_CONFIG) cannot find: $(PKG_MISSING). Install their development \
	packages (as root, `make test` or tools/deps.sh does it on Debian), or \
	point PKG_CONFIG_PATH at them)
endif
else
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS))
PKG_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS))
endif

# Warnings are errors by default (CI); packagers building with another
# compiler version may turn that off: make WERROR=
WERROR ?= -Werror
OPT ?= -O2
CFLAGS ?= $(OPT) -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra $(WERROR) -MMD -MP \
	-pthread -Iinclude $(PKG_CFLAGS)
LDLIBS += $(PKG_LIBS) -lm -pthread

# Runtime asserts (RT_ASSERT, ALWAYS, NEVER: revtrail/rt_assert.h) are on
# in the sanitizer build and off in the one that ships. The unit tests link
# the objects of the build they belong to, so they test what that build
# runs: `make test` runs the suite plain and then under SANITIZE, so every
# unit test, the ones that break an invariant on purpose included, runs
# once with the asserts on (the plain run skips those, saying why).
# ASSERTS=1 turns them on in a plain build too (its own build/dbg).
ASSERTS ?= $(if $(SANITIZE),1,)
ifneq ($(ASSERTS),)
override CFLAGS += -DRT_DEBUG
endif

ifneq ($(SANITIZE),)
override CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
override LDFLAGS += -fsanitize=$(SANITIZE)
B := build/san
BIN := $(B)/revtrail
else ifneq ($(ASSERTS),)
B := build/dbg
BIN := $(B)/revtrail
else
B := build/rel
BIN := revtrail
endif

# Layers, lowest first: core/ (arenas, strings, times) is below every
# stage; each module links only the ones before it that it needs. The
# correlator and the store do not know each other (they share the plain
# rows of revtrail/plan.h); pipeline/ runs both.
MODULES := core ingest rules correlate store pipeline
src_of = $(sort $(wildcard $(1)/*.c))
obj_of = $(patsubst %.c,$(B)/%.o,$(call src_of,$(1)))
LIB_OBJ := $(foreach m,$(MODULES),$(call obj_of,$(m))) $(B)/rules/builtin_packs.o
CLI_OBJ := $(call obj_of,cli)
PACKS := $(sort $(wildcard rules/packs/*.rules))

all: $(BIN)

$(BIN): $(CLI_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

# The default packs are compiled into the binary so revtrail works anywhere.
$(B)/tools/embed: tools/embed.c
	@mkdir -p $(@D)
	$(CC) -O2 -o $@ $<
$(B)/rules/builtin_packs.c: $(PACKS) $(B)/tools/embed
	@mkdir -p $(@D)
	$(B)/tools/embed $(PACKS) > $@
$(B)/rules/builtin_packs.o: $(B)/rules/builtin_packs.c
	$(CC) $(CFLAGS) -c -o $@ $<

# Unit tests: tests/unit/test_MODULE_*.c links only the modules it needs, so
# one module's tests build while another module is half-written.
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
deps_core := core
deps_ingest := core ingest
deps_rules := core rules
deps_correlate := core rules correlate
deps_store := core store
deps_pipeline := core ingest rules correlate store pipeline
deps_cli := core
unit_mod = $(word 2,$(subst _, ,$(notdir $(1))))
# cli's unit tests link the files they test, not main()
cli_unit_objs := $(B)/cli/metrics.o
unit_objs = $(foreach m,$(deps_$(call unit_mod,$(1))),$(call obj_of,$(m))) \
	$(if $(filter cli,$(call unit_mod,$(1))),$(cli_unit_objs)) \
	$(if $(filter rules correlate pipeline,$(call unit_mod,$(1))),$(B)/rules/builtin_packs.o)

.SECONDEXPANSION:
$(B)/tests/unit/%: $(B)/tests/unit/%.o $$(call unit_objs,%)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

pc := %
unit-%: $$(filter $(B)/tests/unit/test_$$*_$$(pc),$(UNIT_BIN))
	@for t in $^; do echo "# $$t"; $$t || exit 1; done

# test and demo first install missing packages, then re-run make so that
# pkg-config is asked again with the libraries present.
test:
	@tools/deps.sh
	@$(MAKE) --no-print-directory -j2 check

demo:
	@tools/deps.sh
	@$(MAKE) --no-print-directory $(BIN)
	@tools/demo.sh $(abspath $(BIN))

check: $(BIN) $(UNIT_BIN)
	REVTRAIL=$(abspath $(BIN)) UNIT_DIR=$(abspath $(B)/tests/unit) \
		prove -f tests/run-unit.sh tests/e2e/t*.sh

FUZZ_SECONDS ?= 60
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
FUZZ_LIB_SRC := $(foreach m,$(MODULES),$(call src_of,$(m)))
build/fuzz/%: tests/fuzz/%.c $(FUZZ_LIB_SRC) build/rel/rules/builtin_packs.c
	@mkdir -p $(@D)
	clang -std=c11 -D_GNU_SOURCE -g -O1 -Iinclude $(PKG_CFLAGS) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^ $(PKG_LIBS) -lm
fuzz: $(FUZZ_BIN)
	@for f in $^; do n=$$(basename $$f); mkdir -p build/fuzz/corpus-$$n; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
		-artifact_prefix=build/fuzz/$$n- build/fuzz/corpus-$$n \
		tests/fuzz/seeds/$${n#fuzz_} || exit 1; done

# The latency case needs a Kafka broker; without one it says so and passes.
bench: $(BIN)
	tests/bench/run.sh $(abspath $(BIN))
	tests/kafka/latency.sh $(abspath $(BIN))

$(B)/cli/main.o $(B)/cli/http.o: override CFLAGS += -DREVTRAIL_VERSION='"$(VERSION)"'

# The unit names the binary by its installed path.
INSTALLED := $(BINDIR)/revtrail \
	$(MANDIR)/man1/revtrail.1 \
	$(DATADIR)/bash-completion/completions/revtrail \
	$(DATADIR)/zsh/site-functions/_revtrail \
	$(UNITDIR)/revtrail-consume@.service \
	$(SYSUSERSDIR)/revtrail.conf \
	$(SYSCONFDIR)/revtrail/kafka.properties.example
install: $(BIN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(DATADIR)/bash-completion/completions \
		$(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(SYSCONFDIR)/revtrail
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/revtrail
	install -m 644 docs/revtrail.1 $(DESTDIR)$(MANDIR)/man1/revtrail.1
	install -m 644 completions/revtrail.bash \
		$(DESTDIR)$(DATADIR)/bash-completion/completions/revtrail
	install -m 644 completions/_revtrail \
		$(DESTDIR)$(DATADIR)/zsh/site-functions/_revtrail
	sed 's|/usr/local/bin/revtrail|$(BINDIR)/revtrail|' \
		deploy/systemd/revtrail-consume@.service \
		> $(DESTDIR)$(UNITDIR)/revtrail-consume@.service
	chmod 644 $(DESTDIR)$(UNITDIR)/revtrail-consume@.service
	install -m 644 deploy/systemd/revtrail.sysusers \
		$(DESTDIR)$(SYSUSERSDIR)/revtrail.conf
	install -m 644 deploy/kafka.properties.example \
		$(DESTDIR)$(SYSCONFDIR)/revtrail/kafka.properties.example

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(SYSCONFDIR)/revtrail 2>/dev/null

clean:
	rm -rf build revtrail

.PHONY: all test check demo fuzz bench install uninstall clean
.SECONDARY: $(UNIT_BIN:=.o)

-include $(shell find build -name '*.d' 2>/dev/null)
