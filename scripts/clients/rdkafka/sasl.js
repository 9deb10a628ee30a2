// Checks SASL against an iggy-kafka gateway started with --sasl with librdkafka 2.12 (through
// node-rdkafka), as Iggy's root user iggy: with each of PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512
// (the SCRAM credentials, password iggy, set beforehand through AlterUserScramCredentials) it
// produces one record to partition 0 of topic TOPIC-MECHANISM and reads it back with an
// assigned consumer. Prints PASS/FAIL lines for scripts/clients-interop.sh; exits 1 when a check
// failed.
//
// Usage: node sasl.js BROKER TOPIC
'use strict'

const Kafka = require('node-rdkafka')

const [broker, topic] = process.argv.slice(2)
const label = `librdkafka ${Kafka.librdkafkaVersion} SASL`
let failed = false

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms))

async function poll (ms, cond) {
  const deadline = Date.now() + ms
  while (!cond()) {
    if (Date.now() > deadline) return false
    await sleep(20)
  }
  return true
}

const connect = client => new Promise(resolve => client.connect({}, err => resolve(err)))
const disconnect = client => new Promise(resolve => client.disconnect(() => resolve()))

async function roundTrip (mech) {
  const t = `${topic}-${mech}`
  const value = `v-${mech}`
  const auth = {
    'metadata.broker.list': broker,
    'security.protocol': 'sasl_plaintext',
    'sasl.mechanisms': mech,
    'sasl.username': 'iggy',
    'sasl.password': 'iggy',
  }
  const errors = []
  const p = new Kafka.Producer({ ...auth, dr_cb: true })
  let report
  p.on('delivery-report', err => { report = err || 'ok' })
  p.on('event.error', err => errors.push(String(err)))
  p.setPollInterval(20)
  let err = await connect(p)
  if (!err) {
    p.produce(t, 0, Buffer.from(value), 'k')
    await poll(10000, () => report !== undefined)
  }
  await disconnect(p)
  if (err || report !== 'ok') {
    failed = true
    console.log(`FAIL  ${label}: ${mech}: produce: ${err || report || 'no delivery report within 10 s'} ${errors.slice(0, 3).join('; ')}`)
    return
  }
  const c = new Kafka.KafkaConsumer({ ...auth, 'group.id': `${t}-g`, 'enable.auto.commit': false }, {})
  const got = []
  c.on('data', msg => got.push(msg))
  c.on('event.error', e => errors.push(String(e)))
  err = await connect(c)
  if (!err) {
    c.assign([{ topic: t, partition: 0, offset: 0 }])
    c.consume()
    await poll(10000, () => got.length > 0)
  }
  await disconnect(c)
  if (!err && got.length === 1 && got[0].offset === 0 && String(got[0].key) === 'k' && String(got[0].value) === value) {
    console.log(`PASS  ${label}: ${mech}: produced and consumed k=${value}`)
  } else {
    failed = true
    console.log(`FAIL  ${label}: ${mech}: consume: ${err || JSON.stringify(got.map(m => [m.offset, String(m.key), String(m.value)]))}, want offset 0 k=${value} ${errors.slice(0, 3).join('; ')}`)
  }
}

;(async () => {
  for (const m of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) await roundTrip(m)
  process.exit(failed ? 1 : 0)
})()
