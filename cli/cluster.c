/*
 * cluster.c: the names of clusters on the command line (--cluster, and
 * consume's -t TOPIC@CLUSTER), and which cluster a consumed record
 * belongs to. The store keys every release by its cluster (pipeline/cluster.c).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_cluster_check(const char *cmd, const char *option, const char *name)
{
	size_t n = strlen(name);

	if (n == 0)
		return cli_usage_error(cmd, "%s: empty cluster name (leave the "
				       "option out for the default cluster)",
				       option);
	if (n > CLI_CLUSTER_MAX)
		return cli_usage_error(cmd, "%s: cluster name longer than %d "
				       "characters", option, CLI_CLUSTER_MAX);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];

		if (ch == '/' || ch == '@')
			return cli_usage_error(cmd, "%s: '%c' in cluster name "
					       "(it separates namespaces and "
					       "topics)", option, ch);
		if (ch <= ' ' || ch >= 0x7f)
			return cli_usage_error(cmd, "%s: cluster name with a "
					       "space, control or non-ASCII "
					       "character (byte %u)", option,
					       ch);
	}
	return 0;
}

int cli_cluster_filter(const char *cmd, const char *name)
{
	return *name ? cli_cluster_check(cmd, "--cluster", name) : 0;
}

int cli_topics_add(struct cli_topics *t, const char *option,
		   const char *arg)
{
	const char *at = strchr(arg, '@');   /* never in a Kafka topic */
	size_t n = at ? (size_t)(at - arg) : strlen(arg);
	char what[32];

	if (t->n == CLI_MAX_TOPICS)
		return cli_usage_error("consume", "too many %s", option);
	if (n > CLI_TOPIC_MAX)
		return cli_usage_error("consume", "%s: topic name longer than "
				       "%d characters", option, CLI_TOPIC_MAX);
	snprintf(what, sizeof(what), "%s TOPIC@CLUSTER", option);
	if (at && cli_cluster_check("consume", what, at + 1))
		return CLI_USAGE;
	memcpy(t->name[t->n], arg, n);
	t->name[t->n][n] = '\0';
	t->names[t->n] = t->name[t->n];
	t->cluster[t->n] = at ? at + 1 : NULL;
	t->n++;
	return 0;
}

struct rt_str cli_topics_cluster(struct cli_topics *t, const char *source)
{
	const char *c = t->dflt;

	if (source && source == t->last_src)
		return t->last;
	for (int i = 0; source && i < t->n; i++)
		if (t->cluster[i] && !strcmp(t->name[i], source)) {
			c = t->cluster[i];
			break;
		}
	t->last_src = source;
	t->last = c ? rt_str_make(c, strlen(c)) : RT_STR_NULL;
	return t->last;
}
