/*
 * Names of the reasons a transport stayed on TCP (see reason.h).
 */
#include "common/reason.h"

static const struct {
	const char *token;
	const char *text;
} fail_names[RDMA_FAIL_MAX] = {
	[RDMA_FAIL_NONE] = { "none", "no failure" },
	[RDMA_FAIL_NO_DEVICE] = { "no-device", "no RDMA device" },
	[RDMA_FAIL_NOT_RDMA] = { "not-rdma", "address not on an RDMA device" },
	[RDMA_FAIL_REFUSED] = { "refused", "refused by the peer" },
	[RDMA_FAIL_UNREACHABLE] = { "unreachable", "peer unreachable over RDMA" },
	[RDMA_FAIL_TIMEOUT] = { "timeout", "no answer in time" },
	[RDMA_FAIL_ERROR] = { "error", "local RDMA error" },
	[RDMA_FAIL_NEGCACHE] = { "negative-cache", "failed recently (negative cache)" },
	[RDMA_FAIL_CONFIG] = { "config", "configuration" },
	[RDMA_FAIL_MEMLOCK] = { "memlock", "cannot register memory (ulimit -l)" },
};

const char *
rdma_fail_str(enum rdma_fail why)
{
	return (unsigned int)why < RDMA_FAIL_MAX ? fail_names[why].text : "?";
}

const char *
rdma_fail_token(enum rdma_fail why)
{
	return (unsigned int)why < RDMA_FAIL_MAX ? fail_names[why].token : "?";
}

