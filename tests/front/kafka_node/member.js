// A ZooKeeper-era group member, as kafka-node 3 wrote one: its ZooKeeper Client finds the brokers under /brokers/ids,
// its HighLevelConsumer registers under /consumers/<group>/ids, claims partitions by the range assignment, fetches
// with Fetch v0 and commits with OffsetCommit v0. Every event is one JSON line on stdout; closing stdin closes the
// member (committing first), as a test ends it.
//
//   node member.js ZOOKEEPER_CONNECT GROUP TOPIC [SESSION_TIMEOUT_MS]
//
// SESSION_TIMEOUT_MS is its ZooKeeper session's (node-zookeeper-client's default: 30000): a member killed leaves the
// group, its registration and claims gone, once its session expires.
'use strict';

const kafka = require('kafka-node');

const [zookeeper, group, topic, sessionTimeout] = process.argv.slice(2);
const say = (event, fields) => process.stdout.write(JSON.stringify(Object.assign({event}, fields)) + '\n');

const client = new kafka.Client(zookeeper, 'kafka-node-member',
  sessionTimeout ? {sessionTimeout: Number(sessionTimeout)} : undefined);
const consumer = new kafka.HighLevelConsumer(client, [{topic}],
  {groupId: group, autoCommit: true, autoCommitIntervalMs: 200, fromOffset: false, outOfRangeOffset: 'earliest'});
say('started', {id: consumer.id});

consumer.on('message', (m) => say('message', {partition: Number(m.partition), offset: m.offset, value: m.value}));
consumer.on('rebalanced', () => say('rebalanced', {}));
consumer.on('error', (e) => say('error', {error: String(e && e.message || e)}));

let closing = false;
const close = () => {
  if (closing) return;
  closing = true;
  consumer.close(true, (err) => {
    say('closed', {error: err ? String(err.message || err) : null});
    client.close(() => process.exit(0));
  });
};
process.stdin.on('end', close);
process.stdin.resume();
process.on('SIGTERM', close);
// Never outlive a test that lost it.
setTimeout(() => process.exit(3), 300000).unref();
