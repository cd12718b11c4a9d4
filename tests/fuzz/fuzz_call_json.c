/* Fuzz target: `calltrace calls` reading a run's call folders (RUN/calls/index.json and
 * FUNC/N/call.json), which a user may have edited or a full disk cut short. The input is one
 * of the two files (its first byte says which); the other is a valid one. Whatever the bytes,
 * the summary, one call and --json end with output or one error line, never a crash. */
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/commands.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char run[256], index_path[320], call_path[320], func_dir[320], call_dir[320], record[320];

static const char valid_index[] =
    "{\"max_call_dirs\":1000,\"functions\":[{\"name\":\"f\",\"folder\":\"f\",\"calls\":2,"
    "\"folders\":1}]}";
static const char valid_call[] =
    "{\"function\":\"f\",\"call\":1,\"pid\":1,\"tid\":1,\"entry_us\":1.5,\"exit_us\":2,"
    "\"params\":[{\"name\":\"v\",\"type\":\"int\",\"value\":\"5\"}],"
    "\"return\":{\"name\":\"return\",\"type\":\"int\",\"value\":\"25\"}}";

static void remove_scratch(void)
{
    unlink(call_path);
    unlink(index_path);
    unlink(record);
    rmdir(call_dir);
    rmdir(func_dir);
    char calls[300];
    snprintf(calls, sizeof(calls), "%s/calls", run);
    rmdir(calls);
    rmdir(run);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    fuzz_silence_stderr();
    if (!freopen("/dev/null", "w", stdout))
        abort();
    const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
    snprintf(run, sizeof(run), "%s/ct-fuzz-calls.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(run))
        abort();
    char calls[300];
    snprintf(calls, sizeof(calls), "%s/calls", run);
    snprintf(func_dir, sizeof(func_dir), "%s/f", calls);
    snprintf(call_dir, sizeof(call_dir), "%s/1", func_dir);
    snprintf(index_path, sizeof(index_path), "%s/index.json", calls);
    snprintf(call_path, sizeof(call_path), "%s/call.json", call_dir);
    snprintf(record, sizeof(record), "%s/events.ctr", run);
    if (mkdir(calls, 0700) < 0 || mkdir(func_dir, 0700) < 0 || mkdir(call_dir, 0700) < 0)
        abort();
    atexit(remove_scratch);
    return 0;
}

static void write_file(const char *path, const void *data, size_t size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FUZZ_ASSERT(fd >= 0);
    FUZZ_ASSERT(write(fd, data, size) == (ssize_t)size);
    close(fd);
}

static int run_calls(int argc, char **argv)
{
    optind = 0; /* getopt starts afresh */
    return cmd_calls(argc, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    bool is_index = data[0] & 1;
    write_file(record, "", 0);
    write_file(is_index ? index_path : call_path, data + 1, size - 1);
    if (is_index)
        write_file(call_path, valid_call, sizeof(valid_call) - 1);
    else
        write_file(index_path, valid_index, sizeof(valid_index) - 1);
    char *summary[] = {"calls", run, NULL};
    char *json[] = {"calls", "--json", run, NULL};
    char *one[] = {"calls", run, "f", "1", NULL};
    char *one_json[] = {"calls", "-j", run, "f", "1", NULL};
    FUZZ_ASSERT(run_calls(2, summary) >= 0);
    FUZZ_ASSERT(run_calls(3, json) >= 0);
    FUZZ_ASSERT(run_calls(4, one) >= 0);
    FUZZ_ASSERT(run_calls(5, one_json) >= 0);
    return 0;
}
