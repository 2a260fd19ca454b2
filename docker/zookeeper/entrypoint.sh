#!/bin/sh
# The server configured at start so that the official image's environment variables mean the same here: alone by
# default; a server of an ensemble with ZOO_MY_ID (its id, written to /data/myid) and ZOO_SERVERS (the lines
# `server.N=host:quorum:election;clientport`, space-separated, where this server's own line gives its client port).
# The data directory is /data, not Debian's /var/lib/zookeeper, whose `myid` symlink makes ZooKeeper reject
# a standalone configuration.
set -eu
{
  echo "tickTime=${ZOO_TICK_TIME:-2000}"
  echo "initLimit=${ZOO_INIT_LIMIT:-5}"
  echo "syncLimit=${ZOO_SYNC_LIMIT:-2}"
  echo "dataDir=/data"
  echo "maxClientCnxns=${ZOO_MAX_CLIENT_CNXNS:-60}"
  echo "admin.enableServer=false"
  echo "4lw.commands.whitelist=${ZOO_4LW_COMMANDS_WHITELIST:-srvr}"
  if [ -n "${ZOO_SERVERS:-}" ]; then
    for server in $ZOO_SERVERS; do echo "$server"; done
  else
    echo "clientPort=2181"
  fi
} > /conf/zoo.cfg
if [ -n "${ZOO_SERVERS:-}" ] && [ ! -f /data/myid ]; then
  echo "${ZOO_MY_ID:-1}" > /data/myid
fi
# Debian's zookeeper.jar names its dependencies in its manifest but no logging back-end: slf4j-simple, first on
# the class path, sends the server's log to stdout, where `podman logs` (and testcontainers) read it.
exec java -Xmx256m -XX:+UseSerialGC -Dzookeeper.jmx.log4j.disable=true \
  -Dorg.slf4j.simpleLogger.logFile=System.out -Dorg.slf4j.simpleLogger.showDateTime=true \
  -cp /usr/share/java/slf4j-simple.jar:/usr/share/java/zookeeper.jar \
  org.apache.zookeeper.server.quorum.QuorumPeerMain /conf/zoo.cfg
