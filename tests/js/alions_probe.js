'use strict';
// Drives a RocketMQ name server and broker with the pure-JavaScript ali-ons client (MQClientAPI)
// and prints what it got as JSON. Used by tests/sim/test_sim_alions.py against mqctl's
// simulated cluster: route lookup, heartbeat with consumer data, consumer id list, offset
// query, max offset and offset search.
const MQClientAPI = require('ali-ons/lib/mq_client_api');

const [nameSrv, group, topic, offsetGroup, timestamp] = process.argv.slice(2);
const silent = { info() {}, warn() {}, error() {}, debug() {} };

async function main() {
  const api = new MQClientAPI({ nameSrv, httpclient: {}, logger: silent, responseTimeout: 5000 });
  await api.ready();
  const route = await api.getTopicRouteInfoFromNameServer(topic, 5000);
  const master = route.brokerDatas[0].brokerAddrs['0'];
  const clientId = '10.8.0.1@4242#alions';
  await api.sendHearbeat(master, {
    clientID: clientId,
    producerDataSet: [],
    consumerDataSet: [{
      groupName: group,
      consumeType: 'CONSUME_PASSIVELY',
      messageModel: 'CLUSTERING',
      consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
      unitMode: false,
      subscriptionDataSet: [{ topic, subString: '*', classFilterMode: false, tagsSet: [],
        codeSet: [], subVersion: Date.now(), expressionType: 'TAG' }],
    }],
  }, 5000);
  const ids = await api.getConsumerIdListByGroup(master, group, 5000);
  const offset = await api.queryConsumerOffset(master, { consumerGroup: offsetGroup, topic,
    queueId: 0 }, 5000);
  const maxOffset = await api.getMaxOffset(master, topic, 0, 5000);
  const searched = await api.searchOffset(master, topic, 0, timestamp, 5000);
  const out = {
    brokers: route.brokerDatas.map(b => ({ name: b.brokerName, addrs: b.brokerAddrs })),
    queues: route.queueDatas.map(q => ({ broker: q.brokerName, read: q.readQueueNums,
      write: q.writeQueueNums, perm: q.perm })),
    master, ids, clientId, offset, maxOffset, searched,
  };
  process.stdout.write(JSON.stringify(out) + '\n');
  await api.close();
}

main().then(() => process.exit(0), err => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
