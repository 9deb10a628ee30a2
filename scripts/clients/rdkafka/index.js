// Checks that librdkafka's KIP-848 consumer groups (group.protocol=consumer, librdkafka 2.12
// through node-rdkafka) work against an iggy-kafka gateway: creates a 3-partition topic, starts
// two members of one group and waits until the broker's assignment gives each a share, produces N
// numbered records, checks that the two read each record exactly once between them, commits and
// closes them (leaving the group), produces M more, and checks that a third run of the group
// reads exactly those M, from the committed offsets. Prints PASS/FAIL lines for
// scripts/clients-interop.sh; exits 1 when a check failed.
//
// Usage: node index.js BROKER TOPIC [N M]
'use strict'

const Kafka = require('node-rdkafka')

const [broker, topic, nArg, mArg] = process.argv.slice(2)
const n = Number(nArg || 300)
const m = Number(mArg || 60)
const group = `${topic}-g`
const label = `librdkafka ${Kafka.librdkafkaVersion} group.protocol=consumer`

let failed = false
const pass = msg => console.log(`PASS  ${label}: ${msg}`)
const fail = msg => {
  failed = true
  console.log(`FAIL  ${label}: ${msg}`)
}

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

function createTopic () {
  const admin = Kafka.AdminClient.create({ 'metadata.broker.list': broker })
  return new Promise(resolve => {
    admin.createTopic({ topic, num_partitions: 3, replication_factor: 1 }, 10000, err => {
      admin.disconnect()
      if (err && err.code !== Kafka.CODES.ERRORS.ERR_TOPIC_ALREADY_EXISTS) {
        fail(`create topic ${topic}: ${err}`)
        resolve(false)
        return
      }
      pass(`created topic ${topic} with 3 partitions`)
      resolve(true)
    })
  })
}

function produce (from, to) {
  return new Promise(resolve => {
    const p = new Kafka.Producer({ 'metadata.broker.list': broker, dr_cb: true, 'enable.idempotence': true })
    let acked = 0
    let errs = 0
    p.on('delivery-report', err => {
      if (err) errs++
      acked++
    })
    p.on('event.error', err => console.error(`producer: ${err}`))
    p.setPollInterval(20)
    p.connect({}, async err => {
      if (err) {
        fail(`producer connect: ${err}`)
        resolve(false)
        return
      }
      for (let i = from; i < to; i++) {
        p.produce(topic, i % 3, Buffer.from(`record-${i}`), `k${i}`)
      }
      const done = await poll(30000, () => acked >= to - from)
      p.disconnect()
      if (!done || errs > 0) {
        fail(`produce records ${from}-${to - 1}: ${acked} delivery reports, ${errs} errors`)
        resolve(false)
        return
      }
      pass(`produced records ${from}-${to - 1} to 3 partitions`)
      resolve(true)
    })
  })
}

// member starts one consumer of the group on the KIP-848 protocol, noting what the broker
// assigns it and what it reads.
function member (name) {
  const c = new Kafka.KafkaConsumer({
    'metadata.broker.list': broker,
    'group.id': group,
    'group.protocol': 'consumer',
    'client.id': `clients-interop-rdkafka-${name}`,
    'enable.auto.commit': false,
    'fetch.wait.max.ms': 100,
    rebalance_cb: true,
  }, { 'auto.offset.reset': 'earliest' })
  const mb = { name, c, assigned: new Set(), read: new Map(), order: [], partitions: new Set(), errors: [] }
  c.on('rebalance', (err, assignment) => {
    for (const tp of assignment) {
      if (tp.topic !== topic) continue
      if (err.code === Kafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) mb.assigned.add(tp.partition)
      if (err.code === Kafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) mb.assigned.delete(tp.partition)
    }
  })
  c.on('event.error', err => mb.errors.push(String(err)))
  c.on('data', msg => {
    const r = /^record-(\d+)$/.exec(msg.value.toString())
    if (!r) {
      mb.errors.push(`partition ${msg.partition} offset ${msg.offset}: value ${msg.value}`)
      return
    }
    const i = Number(r[1])
    mb.read.set(i, (mb.read.get(i) || 0) + 1)
    mb.order.push(i)
    mb.partitions.add(msg.partition)
  })
  c.on('ready', () => {
    c.subscribe([topic])
    c.consume()
  })
  c.connect()
  return mb
}

// stop commits what a member read and closes it, which leaves the group.
function stop (mb) {
  return new Promise(resolve => {
    try {
      if (mb.order.length > 0) mb.c.commitSync(null)
    } catch (e) {
      mb.errors.push(`commit: ${e}`)
    }
    mb.c.disconnect(() => resolve())
  })
}

function counts (members, from, to) {
  const bad = []
  const seen = new Map()
  for (const mb of members) for (const [i, k] of mb.read) seen.set(i, (seen.get(i) || 0) + k)
  for (let i = from; i < to; i++) if (seen.get(i) !== 1) bad.push(`record ${i} read ${seen.get(i) || 0} times`)
  for (const i of seen.keys()) if (i < from || i >= to) bad.push(`unexpected record ${i}`)
  return bad
}

async function twoMembers () {
  const a = member('a')
  const b = member('b')
  const shared = await poll(60000, () => {
    const all = [...a.assigned, ...b.assigned].sort()
    return a.assigned.size > 0 && b.assigned.size > 0 && all.join() === '0,1,2'
  })
  if (!shared) {
    fail(`two members did not share the 3 partitions within 60 s (a [${[...a.assigned]}], b [${[...b.assigned]}]; ${a.errors} ${b.errors})`)
    await stop(a)
    await stop(b)
    return false
  }
  pass(`two members share the partitions: a [${[...a.assigned].sort()}], b [${[...b.assigned].sort()}]`)
  if (!(await produce(0, n))) {
    await stop(a)
    await stop(b)
    return false
  }
  const all = await poll(30000, () => a.order.length + b.order.length >= n)
  await sleep(300) // anything read twice shows up now
  await stop(a)
  await stop(b)
  if (!all) {
    fail(`the two members read ${a.order.length}+${b.order.length} of ${n} records within 30 s (${a.errors} ${b.errors})`)
    return false
  }
  const bad = counts([a, b], 0, n)
  for (const p of a.partitions) if (b.partitions.has(p)) bad.push(`both members read partition ${p}`)
  if (a.order.length === 0 || b.order.length === 0) bad.push('one member read nothing')
  for (const mb of [a, b]) for (const e of mb.errors) if (/commit/.test(e)) bad.push(`${mb.name}: ${e}`)
  if (bad.length > 0) {
    fail(`two members: ${bad.slice(0, 10).join('; ')}`)
    return false
  }
  pass(`two members read all ${n} records once each (a ${a.order.length}, b ${b.order.length}), committed and left`)
  return true
}

async function resume () {
  if (!(await produce(n, n + m))) return false
  const c = member('c')
  const got = await poll(30000, () => c.order.length >= m)
  await sleep(500) // records before the commits would come now
  await stop(c)
  if (!got) {
    fail(`the third run read ${c.order.length} of ${m} new records within 30 s (${c.errors})`)
    return false
  }
  const bad = counts([c], n, n + m)
  if (bad.length > 0) {
    fail(`the third run resumed wrongly: ${bad.slice(0, 10).join('; ')}`)
    return false
  }
  pass(`a third run resumed from the commits and read exactly the ${m} new records`)
  return true
}

async function main () {
  const timer = setTimeout(() => {
    fail('did not finish within 110 s')
    process.exit(1)
  }, 110000)
  if ((await createTopic()) && (await twoMembers())) await resume()
  clearTimeout(timer)
  process.exit(failed ? 1 : 0)
}

main().catch(e => {
  fail(`unexpected error: ${e && e.stack}`)
  process.exit(1)
})
