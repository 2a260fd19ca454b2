#!/bin/sh
# A standalone server, configured at start so that the official image's environment variables mean the same here.
# The data directory is /data, not Debian's /var/lib/zookeeper, whose `myid` symlink makes ZooKeeper reject
# a standalone configuration.
set -eu
cat > /conf/zoo.cfg <<CFG
tickTime=${ZOO_TICK_TIME:-2000}
initLimit=${ZOO_INIT_LIMIT:-5}
syncLimit=${ZOO_SYNC_LIMIT:-2}
dataDir=/data
clientPort=2181
maxClientCnxns=${ZOO_MAX_CLIENT_CNXNS:-60}
admin.enableServer=false
4lw.commands.whitelist=${ZOO_4LW_COMMANDS_WHITELIST:-srvr}
CFG
# Debian's zookeeper.jar names its dependencies in its manifest but no logging back-end: slf4j-simple, first on
# the class path, sends the server's log to stdout, where `podman logs` (and testcontainers) read it.
exec java -Xmx256m -XX:+UseSerialGC -Dzookeeper.jmx.log4j.disable=true \
  -Dorg.slf4j.simpleLogger.logFile=System.out -Dorg.slf4j.simpleLogger.showDateTime=true \
  -cp /usr/share/java/slf4j-simple.jar:/usr/share/java/zookeeper.jar \
  org.apache.zookeeper.server.quorum.QuorumPeerMain /conf/zoo.cfg
