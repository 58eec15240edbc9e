// SPDX-License-Identifier: GPL-2.0
/*
 * Work in a child process (base/child.c), without root: what the child
 * sends comes back in records, its result too; a crash, a time limit or a
 * child that ends without a word are told apart, and the caller goes on.
 * And an empty string buffer gives an empty, terminated string.
 */
#include <signal.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "base/child.h"

static int say_hello(void *arg, int fd)
{
	cgfw_child_send(fd, 7, "hello", 5);
	return -*(int *)arg;
}

static int crash(void *arg, int fd)
{
	volatile int *p = NULL;

	(void)arg;
	(void)fd;
	return *p;
}

static int hang(void *arg, int fd)
{
	(void)arg;
	(void)fd;
	for (;;)
		pause();
	return 0;
}

static int vanish(void *arg, int fd)
{
	(void)arg;
	(void)fd;
	_exit(3);
}

static const struct cgfw_child_limits lim = { .wall_seconds = 2 };

/* as base/child.c: under AddressSanitizer */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

TEST(records_and_the_result_come_back)
{
	struct cgfw_child_end end;
	struct cgfw_child_rec rec;
	struct strbuf out;
	size_t pos = 0;
	int err = EIO;

	cgfw_sb_init(&out);
	EXPECT_EQ(-EIO, cgfw_child_run(say_hello, &err, &lim, &out, &end));
	ASSERT_TRUE(cgfw_child_next(&out, &pos, &rec));
	EXPECT_EQ(7, rec.type);
	EXPECT_EQ(0, memcmp(rec.data, "hello", 5));
	EXPECT_FALSE(cgfw_child_next(&out, &pos, &rec));
	cgfw_sb_release(&out);
}

TEST(a_crash_is_told_and_the_caller_goes_on)
{
	struct cgfw_child_end end;
	struct strbuf out;
	char why[128];

	cgfw_sb_init(&out);
	EXPECT_EQ(-ECHILD, cgfw_child_run(crash, NULL, &lim, &out, &end));
	cgfw_child_describe(&end, why, sizeof(why));
#ifdef UNDER_ASAN
	/* ASan's handler takes the fault, reports it and exits with 1 */
	EXPECT_TRUE(end.no_result);
	EXPECT_NE(NULL, strstr(why, "without an answer"));
#else
	EXPECT_EQ(SIGSEGV, end.signal);
	EXPECT_NE(NULL, strstr(why, "crashed (signal 11"));
#endif
	cgfw_sb_release(&out);
}

TEST(a_child_past_its_time_is_stopped)
{
	struct cgfw_child_end end;
	struct strbuf out;

	cgfw_sb_init(&out);
	EXPECT_EQ(-ECHILD, cgfw_child_run(hang, NULL, &lim, &out, &end));
	EXPECT_TRUE(end.timed_out);
	cgfw_sb_release(&out);
}

TEST(a_child_that_ends_without_a_result_is_no_success)
{
	struct cgfw_child_end end;
	struct strbuf out;

	cgfw_sb_init(&out);
	EXPECT_EQ(-ECHILD, cgfw_child_run(vanish, NULL, &lim, &out, &end));
	EXPECT_TRUE(end.no_result);
	cgfw_sb_release(&out);
}

TEST(an_empty_buffer_gives_an_empty_string)
{
	struct strbuf sb;
	char *s;

	cgfw_sb_init(&sb);
	s = cgfw_sb_detach(&sb);
	ASSERT_NE(NULL, s);
	EXPECT_EQ('\0', s[0]);
	free(s);
}

TEST_HARNESS_MAIN
