// Checks that kafkajs consumer groups work against an iggy-kafka gateway: creates a
// 3-partition topic, starts two members of one group and waits until they share the partitions,
// produces N numbered records, checks that the two read each record exactly once between them,
// disconnects them (committing, leaving), produces M more, and checks that a third run of the
// group reads exactly those M. Prints PASS/FAIL lines for scripts/clients-interop.sh and the
// request versions kafkajs picked (from its own request log); exits 1 when a check failed.
//
// Usage: node index.js BROKER TOPIC [N M]
'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'
const { Kafka, logLevel } = require('kafkajs')

const [broker, topic, nArg, mArg] = process.argv.slice(2)
const n = Number(nArg || 300)
const m = Number(mArg || 60)
const group = `${topic}-g`
const label = 'kafkajs ' + require('kafkajs/package.json').version

let failed = false
const pass = msg => console.log(`PASS  ${label}: ${msg}`)
const fail = msg => {
  failed = true
  console.log(`FAIL  ${label}: ${msg}`)
}

// Request versions, from kafkajs's debug line "Request Fetch(key: 1, version: 11)"; errors and
// warnings are kept to explain a failure.
const versions = new Map()
const problems = []
const logCreator = () => ({ level, log }) => {
  const r = /^Request (\w+)\(key: (\d+), version: (\d+)\)/.exec(log.message)
  if (r) {
    const k = Number(r[2])
    if (!versions.has(k)) versions.set(k, { name: r[1], v: new Set() })
    versions.get(k).v.add(Number(r[3]))
  } else if (level <= logLevel.WARN) {
    const { message, error, type, code } = log
    problems.push(JSON.stringify({ message, error, type, code }))
  }
}

const kafka = new Kafka({
  clientId: 'clients-interop-kafkajs',
  brokers: [broker],
  logLevel: logLevel.DEBUG,
  logCreator,
  retry: { initialRetryTime: 100, retries: 8 },
})

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

// poll waits until cond() holds, up to ms.
async function poll (ms, cond) {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

async function produce (from, to) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  try {
    const messages = []
    for (let i = from; i < to; i++) {
      messages.push({ key: `k${i}`, value: `record-${i}`, partition: i % 3 })
    }
    await producer.send({ topic, acks: -1, messages })
    pass(`produced records ${from}-${to - 1} to 3 partitions`)
    return true
  } catch (e) {
    fail(`produce records ${from}-${to - 1}: ${e}`)
    return false
  } finally {
    await producer.disconnect()
  }
}

// member starts one consumer of the group, noting its assignment and what it reads.
async function member (name) {
  const c = kafka.consumer({ groupId: group, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 })
  const mb = { name, c, assigned: [], read: new Map(), order: [], partitions: new Set(), errors: [] }
  c.on(c.events.GROUP_JOIN, e => {
    mb.assigned = (e.payload.memberAssignment[topic] || []).slice().sort()
  })
  c.on(c.events.CRASH, e => mb.errors.push(String(e.payload.error)))
  await c.connect()
  await c.subscribe({ topic, fromBeginning: true })
  await c.run({
    autoCommitInterval: 100,
    eachMessage: async ({ partition, message }) => {
      const r = /^record-(\d+)$/.exec(message.value.toString())
      if (!r) {
        mb.errors.push(`partition ${partition} offset ${message.offset}: value ${message.value}`)
        return
      }
      const i = Number(r[1])
      mb.read.set(i, (mb.read.get(i) || 0) + 1)
      mb.order.push(i)
      mb.partitions.add(partition)
    },
  })
  return mb
}

async function twoMembers () {
  const a = await member('a')
  const b = await member('b')
  const stop = async () => {
    await a.c.disconnect()
    await b.c.disconnect()
  }
  const shared = await poll(30000, () => {
    const all = a.assigned.concat(b.assigned).sort()
    return a.assigned.length > 0 && b.assigned.length > 0 && all.join() === '0,1,2'
  })
  if (!shared) {
    fail(`two members did not share the 3 partitions within 30 s (a ${a.assigned}, b ${b.assigned}; ${a.errors} ${b.errors})`)
    await stop()
    return false
  }
  pass(`two members share the partitions: a [${a.assigned}], b [${b.assigned}]`)
  if (!(await produce(0, n))) {
    await stop()
    return false
  }
  const all = await poll(30000, () => a.order.length + b.order.length >= n)
  await stop()
  if (!all) {
    fail(`the two members read ${a.order.length}+${b.order.length} of ${n} records within 30 s (${a.errors} ${b.errors})`)
    return false
  }
  const bad = []
  const seen = new Map()
  for (const mb of [a, b]) for (const [i, k] of mb.read) seen.set(i, (seen.get(i) || 0) + k)
  for (let i = 0; i < n; i++) if (seen.get(i) !== 1) bad.push(`record ${i} read ${seen.get(i) || 0} times`)
  for (const i of seen.keys()) if (i < 0 || i >= n) bad.push(`unexpected record ${i}`)
  for (const p of a.partitions) if (b.partitions.has(p)) bad.push(`both members read partition ${p}`)
  if (a.order.length === 0 || b.order.length === 0) bad.push('one member read nothing')
  if (bad.length > 0) {
    fail(`two members: ${bad.slice(0, 10).join('; ')}`)
    return false
  }
  pass(`two members read all ${n} records once each (a ${a.order.length}, b ${b.order.length}), committed and left`)
  return true
}

async function resume () {
  const c = await member('c')
  const got = await poll(30000, () => c.order.length >= m)
  await c.c.disconnect()
  if (!got) {
    fail(`third run read ${c.order.length} of the ${m} new records within 30 s (${c.errors})`)
    return
  }
  // Anything read again would come before the new records of its partition.
  const first = c.order.slice(0, m).sort((x, y) => x - y)
  if (first.some((i, k) => i !== n + k)) {
    fail(`third run: the first ${m} records read are not records ${n}-${n + m - 1}: ${first}`)
  } else if (c.order.length !== m) {
    fail(`third run read ${c.order.length} records, want ${m}`)
  } else {
    pass(`third run resumed at the commits: read only records ${n}-${n + m - 1}`)
  }
}

async function committed (admin) {
  const ends = await admin.fetchTopicOffsets(topic)
  const [res] = await admin.fetchOffsets({ groupId: group, topics: [topic] })
  const fmt = ps => ps.map(p => `${p.partition}:${p.offset ?? p.high}`).sort().join(' ')
  const want = fmt(ends.map(({ partition, high }) => ({ partition, high })))
  const got = fmt(res.partitions)
  if (got === want) pass(`committed offsets equal the end offsets [${want}]`)
  else fail(`committed offsets [${got}], end offsets [${want}]`)
}

async function main () {
  const admin = kafka.admin()
  await admin.connect()
  try {
    const created = await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true })
    if (created) pass(`created topic ${topic} with 3 partitions`)
    else return fail(`create topic ${topic}: it already existed`)
    if (!(await twoMembers())) return
    if (!(await produce(n, n + m))) return
    await resume()
    await committed(admin)
  } finally {
    await admin.disconnect()
  }
}

main()
  .catch(e => fail(`${e.stack || e}`))
  .finally(() => {
    const keys = [...versions.keys()].sort((x, y) => x - y)
    console.log(`      ${label} sent: ${keys.map(k => `${versions.get(k).name} v${[...versions.get(k).v].sort().join(',')}`).join(', ')}`)
    if (failed && problems.length > 0) {
      console.log(`      kafkajs errors and warnings (last 10):\n${problems.slice(-10).map(p => '        ' + p).join('\n')}`)
    }
    process.exit(failed ? 1 : 0)
  })
