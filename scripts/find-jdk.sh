# Sourced by ./fdkvc and .ci/run: sets FDKVC_JAVA_HOME to a JDK >= 25, looking at JAVA_HOME
# first and then at the JDKs in the system's JVM directory (newest first). Prints a clear
# message and returns 1 when there is none.
fdkvc_jdk_major() {
  # the feature version of the JDK at $1, from its release file or from java -version
  local home=$1 v=""
  if [ -f "$home/release" ]; then
    v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$home/release")
  fi
  if [ -z "$v" ] && [ -x "$home/bin/java" ]; then
    v=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
  fi
  echo "${v:-0}"
}

fdkvc_find_jdk() {
  local need=25 candidate best="" best_v=0 v
  if [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/javac" ]; then
    v=$(fdkvc_jdk_major "$JAVA_HOME")
    if [ "$v" -ge "$need" ]; then FDKVC_JAVA_HOME=$JAVA_HOME; return 0; fi
  fi
  for candidate in ${FDKVC_JVM_DIR:-/usr/lib/jvm}/*/; do
    candidate=${candidate%/}
    [ -x "$candidate/bin/javac" ] || continue
    v=$(fdkvc_jdk_major "$candidate")
    if [ "$v" -ge "$need" ] && [ "$v" -gt "$best_v" ]; then best=$candidate; best_v=$v; fi
  done
  if [ -n "$best" ]; then FDKVC_JAVA_HOME=$best; return 0; fi
  echo "fdkvc: needs a JDK >= $need (with javac); JAVA_HOME is '${JAVA_HOME:-unset}' and ${FDKVC_JVM_DIR:-/usr/lib/jvm} has none. Install one (e.g. Temurin 25) and set JAVA_HOME to it." >&2
  return 1
}
