/* greet NAME: greet someone by name. */
#include <stdio.h>

int
main (int argc, char **argv)
{
  printf ("greetings, %s\n", argc > 1 ? argv[1] : "stranger");
  return 0;
}
