/* The xpack commands: each takes the arguments after its name and returns an exit code. */
#ifndef XPACK_TOOLS_COMMANDS_H
#define XPACK_TOOLS_COMMANDS_H

int cmd_dump(int argc, char** argv);
int cmd_verify(int argc, char** argv);
int cmd_pack(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_inflate(int argc, char** argv);
int cmd_export(int argc, char** argv);

#endif
